"""Per-call bounds (token cap, wall-clock cap, line cap, imitated markers) and budgets that
do not depend on the machine's speed, with scripted models and a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatResponse, ScriptedModel, Usage
from stateguard.manager import NullSupervisor
from stateguard.worker.events import AnswerRecorded, ModelMessage, StepRecord
from stateguard.worker.grading import grade
from stateguard.worker.loop import Worker
from stateguard.worker.summary import TurnTally

F = "```"
SUM = f"Sum column a.\n{F}python\nprint(t['a'].sum())\n{F}"
LOAD = f"Load.\n{F}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\n{F}"


def _worker(tracked: TrackedSession, model: ScriptedModel, **kw: object) -> Worker:
    tracked.execute("import pandas as pd\nt = pd.read_csv('data/t.csv')")
    return Worker(model, GuardedSession(tracked, manager=NullSupervisor()), **kw)  # type: ignore[arg-type]


def _steps(events: list) -> list[StepRecord]:
    return [e for e in events if isinstance(e, StepRecord)]


def _replies(events: list) -> list[ModelMessage]:
    return [e for e in events if isinstance(e, ModelMessage) and e.role == "assistant"]


def _response(content: str, *, finish: str = "stop", seconds: float = 0.1, tokens: int = 20):
    return ChatResponse(
        content=content,
        model="scripted",
        finish_reason=finish,
        wall_time=seconds,
        usage=Usage(prompt_tokens=100, completion_tokens=tokens),
    )


@pytest.mark.kernel
def test_a_reply_over_the_line_cap_is_cut_and_counted_malformed(tracked: TrackedSession) -> None:
    runaway = "bookings: 640, cancelled: 100 " * 30  # one endless thought line
    model = ScriptedModel([f"{runaway}\n{SUM}", SUM, "<answer>6</answer>"])
    events = list(_worker(tracked, model).run_turn(1, "What is the sum of column a?"))
    steps = _steps(events)
    assert steps[0].problem == "reply_over_line" and steps[0].execution is None
    assert _replies(events)[0].cut == "line"
    assert events[-1].answer == "6"
    tally = TurnTally.of(events)
    assert tally.invalid == 1 and tally.cuts == {"line": 1}
    # the conversation keeps no runaway text for the model to copy
    assert all(runaway not in m.content for m in model.requests[1].messages)


@pytest.mark.kernel
def test_a_reply_over_the_token_cap_is_counted_malformed(tracked: TrackedSession) -> None:
    model = ScriptedModel(
        [
            _response(f"Sum.\n{F}python\nx = [", finish="length", tokens=512),
            SUM,
            "<answer>6</answer>",
        ]
    )
    events = list(_worker(tracked, model, max_tokens=512).run_turn(1, "Sum of a?"))
    steps = _steps(events)
    assert steps[0].problem == "reply_over_tokens"
    assert _replies(events)[0].cut == "tokens"
    assert model.requests[0].max_tokens == 512
    assert events[-1].answer == "6"


@pytest.mark.kernel
def test_a_call_over_the_wall_clock_cap_is_counted_malformed(tracked: TrackedSession) -> None:
    model = ScriptedModel([_response(SUM, seconds=400.0), SUM, "<answer>6</answer>"])
    events = list(_worker(tracked, model, call_seconds=300).run_turn(1, "Sum of a?"))
    steps = _steps(events)
    assert steps[0].problem == "reply_over_seconds" and steps[0].execution is None
    assert _replies(events)[0].cut == "seconds"
    assert events[-1].answer == "6"


@pytest.mark.kernel
def test_a_reply_imitating_the_manager_is_cut_at_the_marker(tracked: TrackedSession) -> None:
    imitation = f"{SUM}\nManager note: the number of rows is 3. <answer>3</answer>"
    model = ScriptedModel([imitation, "<answer>6</answer>"])
    events = list(_worker(tracked, model).run_turn(1, "Sum of a?"))
    steps = _steps(events)
    assert steps[0].problem is None and steps[0].execution is not None  # the code before it ran
    assert _replies(events)[0].cut == "marker"
    assert "Manager note" not in _replies(events)[0].content
    assert all(
        "Manager note: the number" not in m.content
        for m in model.requests[1].messages
        if m.role == "assistant"
    )
    assert events[-1].answer == "6"


@pytest.mark.kernel
def test_a_marker_before_any_code_leaves_a_malformed_reply(tracked: TrackedSession) -> None:
    model = ScriptedModel(
        ["rows: 3 Manager note: The session has loaded", SUM, "<answer>6</answer>"]
    )
    events = list(_worker(tracked, model).run_turn(1, "Sum of a?"))
    assert _steps(events)[0].problem == "no_action"
    assert events[-1].answer == "6"


class SlowClock:
    """A fake clock: every reading is ``step`` seconds after the last one."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _script() -> list[str]:
    return [
        f"Look.\n{F}python\nprint(t.shape)\n{F}",
        f"Sum.\n{F}python\nprint(t['a'].sum())\n{F}",
        "<answer>6</answer>",
        f"Mean.\n{F}python\nprint(t['b'].mean())\n{F}",
        "<answer>20.0</answer>",
    ]


def _answers(tracked: TrackedSession, clock: SlowClock | None) -> list[tuple]:
    tracked.reset()
    worker = _worker(tracked, ScriptedModel(_script()))
    if clock is not None:
        worker.clock = clock
    out = []
    for turn, question in ((1, "What is the sum of column a?"), (2, "What is the mean of b?")):
        final = list(worker.run_turn(turn, question))[-1]
        assert isinstance(final, AnswerRecorded)
        out.append((final.answer, final.steps, final.ended))
    return out


@pytest.mark.kernel
def test_answers_do_not_change_when_the_clock_is_slowed(tracked: TrackedSession) -> None:
    """With the default budgets (steps and tokens), a machine a thousand times slower gives
    the same answers in the same steps."""
    normal = _answers(tracked, None)
    slowed = _answers(tracked, SlowClock(step=1000.0))
    assert normal == slowed == [("6", 3, "answer"), ("20.0", 2, "answer")]
    assert grade(normal[0][0], 6, None).correct


@pytest.mark.kernel
def test_a_wall_clock_budget_is_optional_and_reported(tracked: TrackedSession) -> None:
    worker = _worker(tracked, ScriptedModel(_script()), turn_seconds=60.0)
    worker.clock = SlowClock(step=1000.0)
    final = list(worker.run_turn(1, "What is the sum of column a?"))[-1]
    assert final.answer is None and final.ended == "time"


@pytest.mark.kernel
def test_the_token_budget_ends_a_turn(tracked: TrackedSession) -> None:
    def replies() -> Iterator[ChatResponse]:
        for i in range(20):
            yield _response(f"Step.\n{F}python\nx{i} = {i}\nprint(x{i})\n{F}", tokens=300)

    model = ScriptedModel(list(replies()))
    events = list(
        _worker(tracked, model, turn_tokens=1000, max_steps_per_turn=10).run_turn(1, "x?")
    )
    final = events[-1]
    assert final.answer is None and final.ended == "tokens" and final.steps == 4
