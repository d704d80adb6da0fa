"""A cell that ignores the timeout interrupt costs one step, not the run."""

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


def test_killed_kernel_is_restarted_and_the_turn_goes_on(
    tracked: TrackedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "_INTERRUPT_GRACE", 1.0)
    model = ScriptedModel(
        [
            f"Load.\n{F}python\nkept = 41\n{F}",
            f"Spin.\n{F}python\n{STUBBORN}\n{F}",
            f"Again.\n{F}python\nprint('kept' in dir())\nkept = 41\nprint(kept + 1)\n{F}",
            "<answer>42</answer>",
        ]
    )
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        data_files="- data/t.csv",
        cell_timeout=1,
    )
    events = list(worker.run_turn(1, "What is 41 + 1?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert steps[1].execution is not None and steps[1].execution.status == "dead"
    assert "did not respond to the interrupt" in steps[1].observation
    assert steps[2].execution is not None and steps[2].execution.ok
    assert steps[2].execution.stdout == "False\n42\n"
    assert isinstance(events[-1], AnswerRecorded) and events[-1].answer == "42"
    # The agent was told its session restarted.
    assert any("restarted" in m.content for m in model.requests[2].messages if m.role == "user")
