"""A cell that ignores the timeout interrupt costs one step, not the run.

The kernel is killed, restarted, and its state rebuilt by running again the cells
that had succeeded; the agent is told which cells and how long it took.
"""

from __future__ import annotations

import pytest

import stateguard.kernel.session as session_module
from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.events import AnswerRecorded, StepRecord
from stateguard.worker.loop import Worker

pytestmark = pytest.mark.kernel

F = "```"
STUBBORN = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"


def _run(tracked: TrackedSession, replies: list[str], **guard_options: object):
    model = ScriptedModel(replies)
    guard = GuardedSession(tracked, manager=NullSupervisor(), audit=False, **guard_options)
    worker = Worker(model, guard, data_files="- data/t.csv", cell_timeout=1)
    events = list(worker.run_turn(1, "What is 41 + 1?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    told = [m.content for m in model.requests[-1].messages if m.role == "user"]
    return events, steps, told, guard


def test_killed_kernel_is_restarted_rebuilt_and_the_turn_goes_on(
    tracked: TrackedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "_INTERRUPT_GRACE", 1.0)
    events, steps, _, _ = _run(
        tracked,
        [
            f"Load.\n{F}python\nkept = 41\n{F}",
            f"Fail.\n{F}python\nlost = 1\nundefined_name\n{F}",
            f"Spin.\n{F}python\n{STUBBORN}\n{F}",
            f"Again.\n{F}python\nprint('kept' in dir(), 'lost' in dir())\nprint(kept + 1)\n{F}",
            "<answer>42</answer>",
        ],
    )
    dead = steps[2]
    assert dead.execution is not None and dead.execution.status == "dead"
    assert "did not respond to the interrupt" in dead.observation
    # one step lost, not the run: the next cell runs in the rebuilt session
    after = steps[3]
    assert after.execution is not None and after.execution.ok
    assert after.execution.stdout == "True False\n42\n"  # the failed cell was not run again
    assert isinstance(events[-1], AnswerRecorded) and events[-1].answer == "42"
    assert events[-1].steps == 5 and events[-1].ended == "answer"


def test_the_agent_is_told_what_was_rebuilt_and_how_long_it_took(
    tracked: TrackedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "_INTERRUPT_GRACE", 1.0)
    replies = [
        f"{F}python\nimport time\nx = 1\n{F}",
        f"{F}python\ny = x + 1\n{F}",
        f"{F}python\n{STUBBORN}\n{F}",
        "<answer>2</answer>",
    ]
    model = ScriptedModel(replies)
    guard = GuardedSession(tracked, manager=NullSupervisor(), audit=False)
    worker = Worker(model, guard, cell_timeout=1, check_answer_numbers=False)
    list(worker.run_turn(1, "y?"))
    note = model.requests[3].messages[-1].content
    assert "crashed and was restarted" in note
    assert "rebuilt by running again" in note and "(steps 0, 1)" in note
    assert "the 2 earlier cells" in note
    assert tracked.kernel.execute("print(y)").stdout == "2\n"


def test_rebuild_stops_at_a_cell_that_fails_again_and_says_so(
    tracked: TrackedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "_INTERRUPT_GRACE", 1.0)
    guard = GuardedSession(tracked, manager=NullSupervisor(), audit=False)
    guard.start()
    guard.begin_turn("q")
    assert guard.run_cell("a = 1").ok
    # a file no recorded cell wrote: step 1 succeeds now and fails when run again
    assert tracked.kernel.execute("open('once.txt', 'w').write('1')").ok
    assert guard.run_cell("import os\nb = open('once.txt').read()\nos.remove('once.txt')").ok
    assert guard.run_cell("c = 3").ok
    outcome = guard.run_cell(STUBBORN, timeout=1)
    assert outcome.restarted and outcome.rebuild is not None
    assert outcome.rebuild.replayed == (0, 1) and outcome.rebuild.failed == 1
    assert "FileNotFoundError" in outcome.rebuild.error
    text = outcome.rebuild.describe()
    assert "stopped at step 1" in text and "missing" in text
    state = tracked.kernel.execute("print('a' in dir(), 'b' in dir(), 'c' in dir())")
    assert state.stdout == "True False False\n"


def test_without_rebuild_the_agent_is_told_everything_is_gone(
    tracked: TrackedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "_INTERRUPT_GRACE", 1.0)
    _, steps, told, _ = _run(
        tracked,
        [
            f"{F}python\nkept = 41\n{F}",
            f"{F}python\n{STUBBORN}\n{F}",
            f"{F}python\nprint('kept' in dir())\n{F}",
            "<answer>gone</answer>",
        ],
        rebuild=False,
    )
    assert steps[2].execution is not None and steps[2].execution.stdout == "False\n"
    assert any("every variable is gone" in m for m in told)
