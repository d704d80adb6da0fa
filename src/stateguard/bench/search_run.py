"""``--worker llm --search best-of-n|beam|dvts``: benchmark turns answered by test-time search.

Per task, every search branch is a tracked kernel of its own, in its own working
directory holding the task's inputs (`task_kernel`), so one branch's writes (to the
namespace or to ``inputs/``) never reach another's. Per turn: the search starts from a
copy of the previous turn's winner (a fresh kernel for turn 1), the turn's DSEval
setup code runs there first (as a context cell: replayed into children, never
verified), then `run_strategy` samples candidate steps from the worker's model
(`ModelPolicy`, the worker's prompt and reply format) and ranks them with the
`StepVerifier`. The winner's kernel is judged like ``--worker llm``'s session:
DSEval against gold from the value of the last successful code step and the checked
variables, the text suites on the answer.

There is no supervisor in a searched run (``--manager none``): the verifier plays
that part. The model sees the earlier turns' winning code as context, not their
conversation. Written per task: ``trajectories/<task>.jsonl`` (the winners' steps as
worker events, readable by ``stateguard verify score``) and ``search/<task>.jsonl``
(per turn, every candidate trajectory with its verdicts and score, and the tiebreak of
a chained verifier such as ``deterministic>hybrid``).
"""

from __future__ import annotations

import itertools
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from stateguard.audit import Auditor
from stateguard.bench.events import Emit, Event
from stateguard.bench.gold import load_or_run_gold
from stateguard.bench.llm_run import describe_inputs, inputs_dir
from stateguard.bench.observe import (
    capture,
    checked_names,
    judge,
    judge_reason,
    namespace_diff,
    observation,
    task_kernel,
)
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.bench.tasks import BenchTask
from stateguard.checks import Step
from stateguard.errors import StateguardError
from stateguard.kernel import KernelSession
from stateguard.llm import ChatMessage, ChatModel, ChatResponse
from stateguard.verify import VerifyTask
from stateguard.verify.chain import build_verifier, needs_model
from stateguard.verify.search import Branch, KernelBranches, ModelPolicy, Proposal
from stateguard.verify.search.strategies import SearchResult
from stateguard.verify.search.turns import run_strategy
from stateguard.worker.events import AnswerRecorded, StepRecord, TurnStarted, dump_event

_CONTEXT_CHARS = 3000
SETUP_THOUGHT = "(context cell of the task, run before the turn)"


class CountingModel:
    """A `ChatModel` that counts the calls it forwards (per role)."""

    def __init__(self, inner: ChatModel) -> None:
        """Wrap ``inner``."""
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        json_schema: dict | None = None,
    ) -> ChatResponse:
        """Forward one call and count it."""
        self.calls += 1
        return self.inner.complete(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=stop,
            json_schema=json_schema,
        )


class TurnBranches:
    """A turn's branch factory: roots copy the previous winner, then run the turn's setup."""

    def __init__(self, inner: KernelBranches, start: Branch | None, setup: str = "") -> None:
        """``start``: the previous turn's winner (None: a fresh kernel)."""
        self.inner, self.start, self.setup = inner, start, setup

    def root(self) -> Branch:
        """A copy of ``start`` (or a fresh kernel) with the setup cell run as a context step."""
        branch = self.inner.root() if self.start is None else self.inner.child(self.start)
        if self.setup:
            branch.run(Proposal(thought=SETUP_THOUGHT, code=self.setup))
        return branch

    def child(self, parent: Branch) -> Branch:
        """A copy of ``parent``."""
        return self.inner.child(parent)


def task_branches(task: BenchTask, work: Path, cell_timeout: float) -> KernelBranches:
    """Kernel branches for ``task``, each in a fresh working directory under ``work``."""
    ids = itertools.count()

    def make() -> KernelSession:
        return task_kernel(task, work / f"b{next(ids)}", cell_timeout=cell_timeout)

    return KernelBranches(make, setup_code=Auditor().setup_code, timeout=cell_timeout)


def _context(turn_context: str, earlier: list[str]) -> str:
    parts = [turn_context] if turn_context else []
    if earlier:
        code = "\n\n".join(earlier)
        if len(code) > _CONTEXT_CHARS:
            code = "…\n" + code[-_CONTEXT_CHARS:]
        parts.append(
            f"Code that already ran in this session (its variables exist):\n```python\n{code}\n```"
        )
    return "\n\n".join(parts)


def _record_search(fh, turn_id: int, result: SearchResult) -> None:
    best = result.candidates.index(result.best)
    fh.write(
        json.dumps(
            {
                "turn": turn_id,
                "best": best,
                "verifier_calls": result.verifier_calls,
                "candidates": [
                    {
                        "score": t.score,
                        "tiebreak": t.tiebreak,
                        "invalid_steps": t.invalid_steps,
                        "answer": t.answer,
                        "steps": [{"code": s.code, "answer": s.answer} for s in t.steps],
                        "verdicts": [
                            {
                                "score": v.score,
                                "tiebreak": v.tiebreak,
                                "invalid": v.invalid,
                                "layer": v.layer,
                                "rationale": v.rationale[:300],
                            }
                            for v in t.verdicts
                        ],
                    }
                    for t in result.candidates
                ],
            }
        )
        + "\n"
    )


def _record_winner(
    fh: TextIO,
    turn_id: int,
    question: str,
    context: str,
    steps: Sequence[Step],
    answer: str | None,
    wall: float,
    counter: itertools.count,
) -> None:
    fh.write(dump_event(TurnStarted(turn=turn_id, question=question, context=context)) + "\n")
    for s in steps:
        fh.write(
            dump_event(
                StepRecord(
                    turn=turn_id,
                    step=next(counter),
                    thought=s.thought,
                    code=s.code,
                    observation=s.observation,
                    execution=s.execution,
                    cell=s.cell,
                    answer=s.answer,
                )
            )
            + "\n"
        )
    fh.write(
        dump_event(
            AnswerRecorded(
                turn=turn_id,
                answer=answer,
                steps=len(steps),
                ended="answer" if answer is not None else "steps",
                wall_time=wall,
            )
        )
        + "\n"
    )


def run_search_task(
    task: BenchTask,
    config: RunConfig,
    run_dir: Path,
    skip: set[int],
    emit: Emit,
    model: ChatModel | None,
    verifier_model: ChatModel | None = None,
) -> None:
    """Search every turn of ``task`` and emit one `TurnResult` per turn.

    ``model`` samples the worker's candidate steps; ``verifier_model`` (default: the
    same model) is the LLM layer of an ``llm``/``hybrid`` verifier.
    """
    if model is None:
        raise StateguardError("--search needs a chat model (--model-config / --base-url)")
    if config.search is None:
        raise StateguardError("run_search_task needs RunConfig.search")
    if config.manager != "none":
        raise StateguardError("--search runs without a supervisor: use --manager none")
    policy_model = CountingModel(model)
    judge_model = None
    if needs_model(config.verifier):
        judge_model = CountingModel(verifier_model or model)
    verifier = build_verifier(config.verifier, judge_model)
    policy = ModelPolicy(
        policy_model,
        data_files=describe_inputs(task),
        max_steps=config.max_steps_per_turn,
        data_dir=inputs_dir(task),
    )
    work = run_dir / "work" / f"{task.task_id}-search"
    gold = None
    if task.suite == "dseval":
        gold = load_or_run_gold(
            task, run_dir / "gold", run_dir / "work" / f"{task.task_id}-gold", config.cell_timeout
        )
    branches = task_branches(task, work, config.cell_timeout)
    for sub in ("trajectories", "search"):
        (run_dir / sub / f"{task.task_id}.jsonl").parent.mkdir(parents=True, exist_ok=True)
    start: Branch | None = None
    earlier: list[str] = []
    counter = itertools.count()
    try:
        with (
            open(run_dir / "trajectories" / f"{task.task_id}.jsonl", "a", encoding="utf-8") as traj,
            open(run_dir / "search" / f"{task.task_id}.jsonl", "a", encoding="utf-8") as log,
        ):
            for turn in task.turns:
                began = time.monotonic()
                calls = (policy_model.calls, judge_model.calls if judge_model else 0)
                setup = turn.meta.get("setup_code") or ""
                if setup:
                    earlier.append(setup)
                vtask = VerifyTask(question=turn.question, context=_context(turn.context, earlier))
                result = run_strategy(
                    config.search,
                    vtask,
                    policy,
                    verifier,
                    TurnBranches(branches, start, setup),
                    n=config.search_n,
                    max_steps=config.max_steps_per_turn,
                )
                if start is not None:
                    start.close()
                start = result.branch
                steps = list(result.best.steps)
                answer = result.best.answer
                sub = None
                session = getattr(start, "tracked", None)
                code_steps = [s for s in steps if s.execution is not None]
                if task.suite == "dseval" and code_steps and session is not None:
                    ok = [s for s in code_steps if s.execution is not None and s.execution.ok]
                    last = ok[-1] if ok else code_steps[-1]
                    assert last.execution is not None
                    captured = capture(
                        session, last.execution, checked_names(task, turn), f"search-{turn.turn_id}"
                    )
                    cells = [s.cell for s in code_steps if s.cell is not None]
                    diff = namespace_diff(session.graph, cells, cells[0].cell) if cells else None
                    source = "\n".join(c.source for c in cells) if cells else None
                    sub = observation(last.execution, captured, diff, source=source)
                g = gold.turn(turn.turn_id) if gold else None
                verdict = judge(
                    task, turn, g.observation if g else None, sub, answer, session=session
                )
                wall = time.monotonic() - began
                _record_search(log, turn.turn_id, result)
                _record_winner(
                    traj, turn.turn_id, turn.question, vtask.context, steps, answer, wall, counter
                )
                log.flush()
                traj.flush()
                earlier.extend(
                    s.code for s in steps if s.code and s.execution is not None and s.execution.ok
                )
                res = TurnResult(
                    task_id=task.task_id,
                    turn_id=turn.turn_id,
                    n_turns=len(task.turns),
                    domain=task.domain,
                    suite=task.suite,
                    correct=None if verdict.excluded else verdict.correct,
                    skipped=bool(g and g.skipped_reason),
                    skipped_reason=g.skipped_reason if g else None,
                    depends_on=g.depends_on if g else turn.depends_on,
                    llm_calls=(judge_model.calls if judge_model else 0) - calls[1],
                    answer=answer,
                    score=None if verdict.excluded else verdict.score,
                    judge_reason=judge_reason(verdict),
                    accepted=answer is not None,
                    attempts=len(result.candidates),
                    worker_llm_calls=policy_model.calls - calls[0],
                    wall_time=wall,
                )
                if turn.turn_id not in skip:
                    emit(Event(kind="turn", task_id=task.task_id, payload=res.model_dump()))
    finally:
        if start is not None:
            start.close()
        shutil.rmtree(work, ignore_errors=True)
