"""Helpers shared by the worker tests: a scripted supervisor and a mini task on disk."""

from __future__ import annotations

import json
from pathlib import Path

from stateguard.checks import Step
from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import AnswerReview, Hint, ManagerEvent, NullSupervisor
from stateguard.worker.events import StepRecord
from stateguard.worker.loop import Worker
from stateguard.worker.preload import Preload

MINI_CSV = "a,b\n1,10\n2,20\n3,30\n"


class FakeSupervisor:
    """Returns scripted hints and verdicts, and records every call."""

    def __init__(
        self,
        *,
        begin: dict[int, list[Hint]] | None = None,
        after: dict[int, list[Hint]] | None = None,
        reject: int = 0,
        repair: Hint | None = None,
        llm_calls_per_review: int = 0,
    ) -> None:
        self.begin = begin or {}
        self.after = after or {}
        self.reject_left = reject
        self.repair = repair
        self.llm_calls_per_review = llm_calls_per_review
        self.llm_calls = 0
        self.calls: list[tuple[str, object]] = []
        self._events: list[ManagerEvent] = []

    def begin_turn(self, turn: int, question: str, context: str = "") -> list[Hint]:
        """Scripted state hints for `turn`."""
        self.calls.append(("begin_turn", turn))
        self._events.append(ManagerEvent(type="activate", turn=turn))
        return list(self.begin.get(turn, []))

    def after_step(self, view: Step) -> list[Hint]:
        """Scripted hints for the global step index."""
        self.calls.append(("after_step", view))
        return list(self.after.get(view.step, []))

    def review_answer(self, view: Step) -> AnswerReview:
        """Reject the first `reject` answers with the repair hint."""
        self.calls.append(("review_answer", view))
        self.llm_calls += self.llm_calls_per_review
        if self.reject_left > 0:
            self.reject_left -= 1
            self._events.append(ManagerEvent(type="repair", turn=view.turn, step=view.step))
            return AnswerReview(accepted=False, hints=(self.repair,) if self.repair else ())
        return AnswerReview(accepted=True)

    def end_turn(self, turn: int, answer: str | None) -> None:
        """Record the end of the turn."""
        self.calls.append(("end_turn", (turn, answer)))

    def drain_events(self) -> list[ManagerEvent]:
        """Events since the last drain."""
        out, self._events = self._events, []
        return out


def write_mini_task(root: Path, fmt: str = "yaml") -> Path:
    """A two-turn task directory over MINI_CSV; returns the directory."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "data" / "t.csv").write_text(MINI_CSV)
    if fmt == "yaml":
        (root / "task.yaml").write_text(
            "name: mini\ndata: data\nturns:\n"
            "  - question: What is the sum of column a?\n    answer: 6\n"
            "  - context: Column b is in cents.\n"
            "    question: What is the mean of b?\n    answer: 20\n"
        )
    else:
        (root / "task.json").write_text(
            json.dumps(
                {
                    "name": "mini",
                    "data": ["data/t.csv"],
                    "turns": [
                        {"question": "What is the sum of column a?", "answer": 6},
                        {"question": "What is the mean of b?", "answer": 20},
                    ],
                }
            )
        )
    return root


def answer_after_one_cell(
    tracked: TrackedSession,
    cell: str,
    answer: str,
    question: str,
    *,
    turn: int = 1,
    context: str = "",
    setup: Preload | None = None,
) -> list[StepRecord]:
    """One turn in which the model runs ``cell``, then answers ``answer`` until it is
    submitted: each answer check that holds it back asks once, so the same answer again
    goes on. Returns the turn's steps."""
    reply = f"<answer>{answer}</answer>"
    model = ScriptedModel([f"```python\n{cell}\n```", *[reply] * 4])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(turn, question, context))
    assert events[-1].answer == answer  # asked once: the same answer again is submitted
    return [e for e in events if isinstance(e, StepRecord)]
