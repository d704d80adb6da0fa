"""`RunSession(resume=True)`: a crashed run continues from its last finished turn, exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from resume_helpers import assert_same_run, turn_keys
from worker_helpers import MINI_CSV

from stateguard.llm import ScriptedModel
from stateguard.report import write_report
from stateguard.worker.resume import (
    ModelTape,
    ReplayClock,
    ResumeError,
    TapeEntry,
    prepare_resume,
)
from stateguard.worker.run import RunSession, run_task
from stateguard.worker.tasks import Task, load_task

F = "```"
TURN_REPLIES = [
    [
        f"{F}python\nimport pandas as pd\ndf = pd.read_csv('data/t.csv')\nint(df.a.sum())\n{F}",
        "<answer>6</answer>",
    ],
    [f"{F}python\nm = float(df.b.mean())\nm\n{F}", "<answer>20.0</answer>"],
    [
        f"{F}python\ndf['ab'] = df.a * df.b\n{F}",
        f"{F}python\nint(df.ab.max())\n{F}",
        "<answer>90</answer>",
    ],
]


def _task(root: Path) -> Task:
    (root / "data").mkdir(parents=True)
    (root / "data" / "t.csv").write_text(MINI_CSV)
    (root / "task.yaml").write_text(
        "name: mini3\ndata: data\nturns:\n"
        "  - question: Sum of a?\n    answer: 6\n"
        "  - question: Mean of b?\n    answer: 20\n"
        "  - question: Max of a times b?\n    answer: 90\n"
    )
    return load_task(root)


def _replies(first_turn: int = 1) -> list[str]:
    return [r for turn in TURN_REPLIES[first_turn - 1 :] for r in turn]


def _crash(task: Task, run_dir: Path, finished: int, steps_into_next: int) -> None:
    """Run ``finished`` turns and ``steps_into_next`` steps of the next, then stop dead:
    nothing is closed or written at the end (the kernel is stopped as a kill would)."""
    run = RunSession(task, ScriptedModel(_replies()), run_dir, manager="deterministic")
    run.start()
    for turn in task.turns[:finished]:
        list(run.run_turn(turn.question, turn.context, turn.answer, turn.tolerance))
    nxt = task.turns[finished]
    steps = 0
    for event in run.run_turn(nxt.question, nxt.context, nxt.answer, nxt.tolerance):
        steps += event.type == "step"
        if steps >= steps_into_next:
            break
    assert run._guard is not None and run._tape is not None
    run._guard.close()  # the kernel dies with the process
    run._tape.close()
    run._trajectory.close()


def _resume(task: Task, run_dir: Path) -> RunSession:
    with RunSession(
        task,
        ScriptedModel(_replies(_finished(run_dir) + 1)),
        run_dir,
        manager="deterministic",
        report=write_report,
        resume=True,
    ) as run:
        for turn in task.turns[run.turns_done :]:
            list(run.run_turn(turn.question, turn.context, turn.answer, turn.tolerance))
    return run


def _finished(run_dir: Path) -> int:
    """Turns whose answer is on disk (a torn last line is not one)."""
    lines = (run_dir / "trajectory.jsonl").read_text().splitlines()
    return sum(1 for line in lines if line.endswith("}") and json.loads(line)["type"] == "answer")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Task, Path]:
    root = tmp_path_factory.mktemp("full")
    task = _task(root / "task")
    run_task(task, ScriptedModel(_replies()), "deterministic", root / "run", report=write_report)
    return task, root / "run"


@pytest.mark.kernel
@pytest.mark.parametrize(("finished", "steps_into_next"), [(1, 1), (2, 2), (0, 1)])
def test_resume_gives_the_uninterrupted_run(
    uninterrupted: tuple[Task, Path], tmp_path: Path, finished: int, steps_into_next: int
) -> None:
    task, full = uninterrupted
    run_dir = tmp_path / "run"  # the same name: the report shows it
    _crash(task, run_dir, finished, steps_into_next)
    assert _finished(run_dir) == finished
    run = _resume(task, run_dir)
    assert run.resumed is not None
    assert run.resumed.replayed_turns == finished
    setup = 1 if finished else 0  # a replayed first turn runs the worker's setup cell again
    assert run.resumed.replayed_cells == setup + sum(
        sum(1 for r in TURN_REPLIES[t] if "python" in r) for t in range(finished)
    )
    assert run.resumed.divergences == []
    assert run.resumed.dropped_events > 0  # the half-finished turn, redone
    keys = turn_keys(run_dir)
    assert len(keys) == len(set(keys)) and keys == turn_keys(full)  # none lost, none twice
    assert_same_run(run_dir, full)
    # the previous attempt is kept, not deleted
    previous = run_dir / "previous" / "1"
    assert (previous / "trajectory.jsonl").read_text().count("\n") > 0
    assert json.loads((run_dir / "resumes.jsonl").read_text())["replayed_turns"] == finished


@pytest.mark.kernel
def test_a_torn_last_line_is_redone_and_a_second_resume_changes_nothing(
    uninterrupted: tuple[Task, Path], tmp_path: Path
) -> None:
    task, full = uninterrupted
    run_dir = tmp_path / "run"
    _crash(task, run_dir, 1, 1)
    with open(run_dir / "trajectory.jsonl", "a") as fh:
        fh.write('{"turn": 2, "type": "st')  # torn by the kill
    with open(run_dir / "model_calls.jsonl", "a") as fh:
        fh.write('{"role": "wor')
    _resume(task, run_dir)
    assert_same_run(run_dir, full)
    # resuming a finished run replays it all and runs nothing new
    again = _resume(task, run_dir)
    assert again.resumed is not None and again.resumed.replayed_turns == 3
    assert again.resumed.dropped_events == 0
    assert_same_run(run_dir, full)


@pytest.mark.kernel
def test_resume_refuses_another_task_or_config(
    uninterrupted: tuple[Task, Path], tmp_path: Path
) -> None:
    task, full = uninterrupted
    run_dir = tmp_path / "run"
    shutil.copytree(full, run_dir, symlinks=True)
    other = task.model_copy(update={"turns": task.turns[:2]})
    with pytest.raises(ResumeError, match="task_digest") as err:
        RunSession(other, ScriptedModel([]), run_dir, manager="deterministic", resume=True).start()
    assert str(run_dir / "run.json") in str(err.value)
    with pytest.raises(ResumeError, match="manager: recorded 'deterministic', now 'none'"):
        RunSession(task, ScriptedModel([]), run_dir, manager="none", resume=True).start()
    with pytest.raises(ResumeError, match=r"options\.max_steps_per_turn"):
        RunSession(
            task,
            ScriptedModel([]),
            run_dir,
            manager="deterministic",
            max_steps_per_turn=3,
            resume=True,
        ).start()
    assert not (run_dir / "previous").exists()  # refused before anything was moved
    with pytest.raises(ResumeError, match="not a run directory that can be resumed"):
        RunSession(task, ScriptedModel([]), tmp_path / "empty", resume=True).start()


@pytest.mark.kernel
def test_a_replay_that_needs_other_model_calls_is_refused(
    uninterrupted: tuple[Task, Path], tmp_path: Path
) -> None:
    task, full = uninterrupted
    run_dir = tmp_path / "run"
    shutil.copytree(full, run_dir, symlinks=True)
    tape = run_dir / "model_calls.jsonl"
    lines = tape.read_text().splitlines()
    tape.write_text("\n".join(lines[1:]) + "\n")  # turn 1's first call is missing
    with pytest.raises(ResumeError, match="does not replay the same way"):
        RunSession(task, ScriptedModel([]), run_dir, manager="deterministic", resume=True).start()


def test_a_damaged_record_is_refused(tmp_path: Path) -> None:
    (tmp_path / "trajectory.jsonl").write_text('{"turn": 1, "type": "turn_start"\n{"turn": 1}\n')
    with pytest.raises(ResumeError, match=r"trajectory.jsonl:1: .*not the last line"):
        prepare_resume(tmp_path)
    assert not (tmp_path / "previous").exists()


def test_replay_clock_ends_a_time_budget_turn_after_its_last_recorded_call(
    tmp_path: Path,
) -> None:
    tape = ModelTape(tmp_path / "tape.jsonl")
    tape.turn = 2
    clock = ReplayClock(tape, 2, "time", calls=1)
    frozen = clock()
    assert clock() == frozen  # time stands still: no budget runs out early
    tape._served[("worker", 2)] = 1
    assert clock() == float("inf")
    other = ReplayClock(tape, 2, "answer", calls=1)
    assert other() == other.frozen
    tape.close()


def test_the_tape_replays_each_role_in_its_own_order(tmp_path: Path) -> None:
    worker, manager = ScriptedModel(["w1", "w2", "w3"]), ScriptedModel(["m1", "m2"])
    tape = ModelTape(tmp_path / "calls.jsonl")
    w, m = tape.wrap(worker, "worker"), tape.wrap(manager, "manager")
    tape.turn = 1
    said = [w.complete([]).content, m.complete([]).content, w.complete([]).content]
    tape.turn = 2
    said += [m.complete([]).content, w.complete([]).content]
    tape.close()
    assert said == ["w1", "m1", "w2", "m2", "w3"]
    recorded = [
        TapeEntry.model_validate_json(line)
        for line in (tmp_path / "calls.jsonl").read_text().splitlines()
    ]
    assert [(e.role, e.turn, e.call) for e in recorded] == [
        ("worker", 1, 0),
        ("manager", 1, 0),
        ("worker", 1, 1),
        ("manager", 2, 0),
        ("worker", 2, 0),
    ]
    # replay turn 1 only (turn 2 was half-finished): no model is called
    replay = ModelTape(tmp_path / "again.jsonl", [e for e in recorded if e.turn == 1])
    silent = ScriptedModel([])
    w2, m2 = replay.wrap(silent, "worker"), replay.wrap(silent, "manager")
    replay.turn = 1
    assert [m2.complete([]).content, w2.complete([]).content, w2.complete([]).content] == [
        "m1",
        "w1",
        "w2",
    ]
    assert replay.left(1) == 0 and silent.requests == []
    with pytest.raises(ResumeError, match="asked the worker model for call 3"):
        w2.complete([])
    replay.close()


@pytest.mark.kernel
def test_a_turn_the_time_budget_ended_replays_the_same_way(tmp_path: Path) -> None:
    task = _task(tmp_path / "task")
    load = "import time\nimport pandas as pd\ndf = pd.read_csv('data/t.csv')\ntime.sleep(1.5)"
    slow = [f"{F}python\n{load}\n{F}", "<answer>6</answer>"]
    replies = slow + TURN_REPLIES[1][:1]  # turn 1 runs out of time after its first step

    def session(run_dir: Path, model: ScriptedModel, resume: bool = False) -> RunSession:
        return RunSession(
            task, model, run_dir, manager="deterministic", turn_seconds=1.0, resume=resume
        )

    run_dir = tmp_path / "run"
    run = session(run_dir, ScriptedModel(replies))
    run.start()
    first = task.turns[0]
    events = list(run.run_turn(first.question, first.context, first.answer, first.tolerance))
    assert events[-1].type == "answer" and events[-1].ended == "time"
    second = task.turns[1]
    for event in run.run_turn(second.question, second.context, second.answer):
        if event.type == "step":
            break  # the kill
    assert run._guard is not None and run._tape is not None
    run._guard.close()
    run._tape.close()
    run._trajectory.close()

    with session(run_dir, ScriptedModel(TURN_REPLIES[1]), resume=True) as resumed:
        assert resumed.turns_done == 1
        assert resumed.resumed is not None and resumed.resumed.divergences == []
        assert resumed.outcomes[0].ended == "time" and resumed.outcomes[0].steps == 1
        list(resumed.run_turn(second.question, second.context, second.answer))
    assert [t.answer for t in resumed.summary().turns] == [None, "20.0"]
