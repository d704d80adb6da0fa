"""``--worker llm``: the real agent (`stateguard.worker.loop.Worker`) on benchmark tasks.

Per task: one tracked kernel with the task's inputs, the chosen supervisor, one
`Worker`. Per turn: DSEval setup code (context cells) runs first, as DSEval runs it
without the agent; then ``Worker.run_turn``. Judging: DSEval compares the value of
the last expression of the turn's last successful code step and the checked
variables with gold (the clean reference run); LongDS and InfiAgent judge the
answer text. ``flagged`` = a repair hint was delivered; ``repaired`` = code ran after
it; ``first_correct`` (text suites) judges the first proposed answer.
Trajectories are written to ``trajectories/<task>.jsonl`` and every model call to
``trajectories/<task>.calls.jsonl``. A resumed run (``skip`` = the turns already in
``turns.jsonl``) keeps those turns' lines as they are, runs them again on the recorded
model calls (the kernel, lineage and manager are rebuilt as they were; nothing is
appended for them), and appends the turns it runs anew. Lines of a half-finished turn,
and corrupt lines, are moved to ``trajectories/<task>.quarantined.jsonl`` (a corrupt
line with a warning).
"""

from __future__ import annotations

import json
import shutil
import time
import warnings
from pathlib import Path

from stateguard.bench.events import Emit, Event
from stateguard.bench.gold import load_or_run_gold
from stateguard.bench.observe import (
    capture,
    checked_names,
    guarded_task_session,
    judge,
    judge_reason,
    namespace_diff,
    observation,
    seed_randomness,
)
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.bench.tasks import BenchTask
from stateguard.errors import StateguardError
from stateguard.llm import ChatModel
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    StepRecord,
    dump_event,
)
from stateguard.worker.loop import Worker
from stateguard.worker.resume import ModelTape, ReplayClock, keep_turns
from stateguard.worker.summary import TurnTally

_LISTED = 30


def inputs_dir(task: BenchTask) -> str:
    """The directory of the kernel's working directory that holds the task's inputs:
    ``inputs`` for DSEval (a writable copy), ``data`` (read-only) otherwise
    (`stateguard.bench.observe.task_kernel`)."""
    return "inputs" if task.suite == "dseval" else "data"


def describe_inputs(task: BenchTask) -> str:
    """The input listing for the worker's system prompt, with the paths the code must use."""
    if task.data_dir is None:
        return ""
    prefix = inputs_dir(task)
    files = sorted(p for p in task.data_dir.rglob("*") if p.is_file())
    lines = ["Files:"] + [
        f"- {prefix}/{p.relative_to(task.data_dir).as_posix()} ({p.stat().st_size / 1024:.1f} KB)"
        for p in files[:_LISTED]
    ]
    if len(files) > _LISTED:
        lines.append(f"- … and {len(files) - _LISTED} more files")
    return "\n".join(lines)


def run_llm_task(
    task: BenchTask,
    config: RunConfig,
    run_dir: Path,
    skip: set[int],
    emit: Emit,
    model: ChatModel | None,
) -> None:
    """Run the agent over every turn of ``task`` and emit one `TurnResult` per turn."""
    if model is None:
        raise StateguardError("--worker llm needs a chat model (--model-config / --base-url)")
    work = run_dir / "work"
    gold = None
    if task.suite == "dseval":
        gold = load_or_run_gold(
            task, run_dir / "gold", work / f"{task.task_id}-gold", config.cell_timeout
        )
    manager_dir = run_dir / "manager" / task.task_id
    shutil.rmtree(manager_dir, ignore_errors=True)
    traj_dir = run_dir / "trajectories"
    traj_path = traj_dir / f"{task.task_id}.jsonl"  # LongDS ids are domain/dataset/taskN
    traj_path.parent.mkdir(parents=True, exist_ok=True)
    tape_path = traj_path.with_suffix(".calls.jsonl")
    recorded, problems = keep_turns(
        traj_path, tape_path, skip, traj_path.with_suffix(".quarantined.jsonl")
    )
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    tape = ModelTape(tape_path, recorded)
    guard = guarded_task_session(
        task,
        work / task.task_id,
        manager=config.manager,
        model=tape.wrap(model, "manager"),
        manager_dir=manager_dir,
        cell_timeout=config.cell_timeout,
    )
    try:
        guard.start()
        session = guard.tracked
        seed_randomness(task, session)  # context code draws as in the gold run
        worker = Worker(
            tape.wrap(model, "worker"),
            guard,
            max_steps_per_turn=config.max_steps_per_turn,
            cell_timeout=config.cell_timeout,
            data_files=describe_inputs(task),
            data_dir=inputs_dir(task),
        )
        # appended: the finished turns' lines stay, only turns run anew are written
        with open(traj_path, "a", encoding="utf-8") as traj:
            for turn in task.turns:
                tape.turn = turn.turn_id
                replay = turn.turn_id in skip and tape.left(turn.turn_id) > 0
                tape.replaying = replay
                worker.clock = time.monotonic
                if replay:
                    ended = _recorded_end(traj_path, turn.turn_id)
                    calls = sum(
                        1 for e in recorded if e.role == "worker" and e.turn == turn.turn_id
                    )
                    worker.clock = ReplayClock(tape, turn.turn_id, ended, calls)
                started = time.monotonic()
                setup = turn.meta.get("setup_code")
                if setup:
                    guard.run_setup(setup, timeout=config.cell_timeout)
                events = []
                for ev in worker.run_turn(turn.turn_id, turn.question, turn.context):
                    if turn.turn_id not in skip:  # flushed per event: a kill loses none
                        traj.write(dump_event(ev) + "\n")
                        traj.flush()
                    events.append(ev)
                if replay and tape.left(turn.turn_id):
                    warnings.warn(
                        f"{tape_path}: turn {turn.turn_id} replayed with "
                        f"{tape.left(turn.turn_id)} recorded model call(s) unused",
                        stacklevel=2,
                    )
                tally = TurnTally.of(events)
                steps = [e for e in events if isinstance(e, StepRecord)]
                code_steps = [s for s in steps if s.execution is not None]
                repair_at = [
                    i
                    for i, e in enumerate(events)
                    if isinstance(e, HintDelivered) and e.hint.kind == "repair"
                ]
                answer_ev = next(e for e in events if isinstance(e, AnswerRecorded))
                answer = answer_ev.answer
                sub = None
                if task.suite == "dseval":
                    ok_steps = [s for s in code_steps if s.execution.ok]
                    last = ok_steps[-1] if ok_steps else (code_steps[-1] if code_steps else None)
                    if last is not None:
                        captured = capture(
                            session,
                            last.execution,
                            checked_names(task, turn),
                            f"llm-{turn.turn_id}",
                        )
                        cells = [s.cell for s in code_steps if s.cell is not None]
                        diff = (
                            namespace_diff(session.graph, cells, cells[0].cell) if cells else None
                        )
                        source = "\n".join(c.source for c in cells) if cells else None
                        sub = observation(last.execution, captured, diff, source=source)
                g = gold.turn(turn.turn_id) if gold else None
                g_obs = g.observation if g else None
                verdict = judge(task, turn, g_obs, sub, answer, session=session)
                first_correct = None
                proposals = [s.answer for s in steps if s.answer is not None and s.problem is None]
                if task.suite != "dseval" and proposals:
                    first = judge(task, turn, None, None, proposals[0])
                    first_correct = None if first.excluded else first.correct
                correct = None if verdict.excluded else verdict.correct
                repaired = bool(repair_at) and any(
                    isinstance(e, StepRecord) and e.execution is not None
                    for e in events[repair_at[0] :]
                )
                skipped_reason = g.skipped_reason if g else None
                result = TurnResult(
                    task_id=task.task_id,
                    turn_id=turn.turn_id,
                    n_turns=len(task.turns),
                    domain=task.domain,
                    suite=task.suite,
                    correct=correct,
                    skipped=skipped_reason is not None,
                    skipped_reason=skipped_reason,
                    depends_on=g.depends_on if g else turn.depends_on,
                    flagged=bool(repair_at),
                    repaired=repaired,
                    fixed_by_repair=repaired and first_correct is False and correct is True,
                    llm_calls=answer_ev.manager_llm_calls,
                    answer=answer,
                    score=None if verdict.excluded else verdict.score,
                    judge_reason=judge_reason(verdict),
                    first_correct=first_correct,
                    accepted=answer is not None,
                    attempts=tally.proposed,
                    repair_hints=tally.repairs,
                    worker_llm_calls=tally.replies,
                    wall_time=time.monotonic() - started,
                )
                if turn.turn_id not in skip:
                    emit(Event(kind="turn", task_id=task.task_id, payload=result.model_dump()))
    finally:
        guard.close()
        tape.close()
        shutil.rmtree(work / task.task_id, ignore_errors=True)


def _recorded_end(traj_path: Path, turn_id: int) -> str:
    """Why the recorded turn ended (``answer`` when its record says nothing)."""
    for line in traj_path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)  # keep_turns left only valid lines
        if event.get("type") == "answer" and event.get("turn") == turn_id:
            return str(event.get("ended", "answer"))
    return "answer"
