"""A doubt never costs the turn its answer: when no answer is accepted, the latest one turned
away on a doubt alone is reported, marked unconfirmed; one refused on evidence is not."""

from __future__ import annotations

import itertools

import pytest
from worker_helpers import FakeSupervisor

from stateguard.checks import Finding
from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import Hint, NullSupervisor
from stateguard.manager.notices import repair_hint
from stateguard.worker.events import AnswerRecorded, StepRecord
from stateguard.worker.grading import Grade
from stateguard.worker.loop import DOUBTS, Worker
from stateguard.worker.summary import TurnTally

F = "```"
SHARE = "What share of the hours was taught in Bath? Give the percentage."
FAILING = ["t = 1 / 0", "t = 1/0  # fixed", "t = 1 /  0"]


def _code(src: str) -> str:
    return f"Next step.\n{F}python\n{src}\n{F}"


def _script(answer: str, *, then_answer: str | None = None):
    """Replies: a cell printing ``answer``, the answer, then failing cells until the turn
    ends (or, with ``then_answer``, a cell printing it and that answer first)."""
    cell = f"import math\nx = math.fsum([{answer} / 2, {answer} / 2])\nprint(x)"  # computed
    replies = [_code(cell), f"<answer>{answer}</answer>"]
    if then_answer is not None:
        again = f"import math\ny = math.fsum([{then_answer} / 2, {then_answer} / 2])\nprint(y)"
        replies += [_code(again), f"<answer>{then_answer}</answer>"]
    failing = itertools.cycle(FAILING)
    it = iter(replies)
    return ScriptedModel(fn=lambda messages: next(it, None) or _code(next(failing)))


def _worker(tracked: TrackedSession, model: ScriptedModel, supervisor: object) -> Worker:
    return Worker(
        model,
        GuardedSession(tracked, manager=supervisor),  # type: ignore[arg-type]
        max_steps_per_turn=12,
        no_progress_limit=3,
        retry_samples=0,
    )


def _refusal(severity: str, check: str, basis: str) -> Hint:
    """A manager's repair note resting on one finding of ``severity``."""
    found = Finding(check=check, severity=severity, message=check, basis=(basis,))  # type: ignore[arg-type]
    return repair_hint([found], check, "light", state_id=None)


@pytest.mark.kernel
def test_an_answer_turned_away_on_a_doubt_is_the_turns_unconfirmed_answer(
    tracked: TrackedSession,
) -> None:
    supervisor = FakeSupervisor()
    events = list(_worker(tracked, _script("76861.0"), supervisor).run_turn(1, SHARE))
    problems = [e.problem for e in events if isinstance(e, StepRecord) and e.problem]
    assert problems[0] == "impossible_share" and "impossible_share" in DOUBTS
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.ended == "no_progress"
    assert final.answer == "76861.0" and final.unconfirmed
    # the manager is not told of it: nothing unconfirmed is committed to the state graph
    assert ("end_turn", (1, None)) in supervisor.calls
    # and it still counts as a rejected answer
    outcome = TurnTally.of(events).outcome(SHARE, "", final, _grade())
    assert outcome.unconfirmed and outcome.rejected_answers == 1


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("hint", "held"),
    [
        (_refusal("doubt", "judge", "question"), True),  # a reading of the question
        (_refusal("alarm", "stale_read", "lineage"), False),  # evidence
    ],
)
def test_a_manager_refusal_holds_the_answer_only_without_an_alarm(
    tracked: TrackedSession, hint: Hint, held: bool
) -> None:
    supervisor = FakeSupervisor(reject=5, repair=hint)
    question = "What is the total of x?"
    events = list(_worker(tracked, _script("42"), supervisor).run_turn(1, question))
    final = events[-1]
    assert isinstance(final, AnswerRecorded) and final.ended == "no_progress"
    assert [c for c in supervisor.calls if c[0] == "review_answer"]  # it was reviewed
    assert final.unconfirmed is held
    assert final.answer == ("42" if held else None)


@pytest.mark.kernel
def test_an_answer_accepted_later_is_confirmed(tracked: TrackedSession) -> None:
    model = _script("76861.0", then_answer="21.5")
    events = list(_worker(tracked, model, NullSupervisor()).run_turn(1, SHARE))
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer == "21.5" and final.ended == "answer" and not final.unconfirmed


@pytest.mark.kernel
def test_an_answer_refused_as_ungrounded_is_not_held(tracked: TrackedSession) -> None:
    """Numbers no output showed are evidence the answer was not computed: not held."""
    replies = iter([_code("x = 3\nprint(x)"), "<answer>987654</answer>"])
    failing = itertools.cycle(FAILING)
    model = ScriptedModel(fn=lambda messages: next(replies, None) or _code(next(failing)))
    events = list(_worker(tracked, model, NullSupervisor()).run_turn(1, "What is x?"))
    problems = [e.problem for e in events if isinstance(e, StepRecord) and e.problem]
    assert "ungrounded_answer" in problems and "ungrounded_answer" not in DOUBTS
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer is None and not final.unconfirmed


def _grade() -> Grade:
    return Grade(correct=None)
