"""No-progress detection, Best-of-N on a repeated failure, and the per-turn time budget."""

from __future__ import annotations

import itertools
import time

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatMessage, ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.attempts import AttemptLog, cell_key
from stateguard.worker.events import AnswerRecorded, ModelMessage, StepRecord
from stateguard.worker.loop import Worker

F = "```"


def code(src: str, thought: str = "Next step.") -> str:
    return f"{thought}\n{F}python\n{src}\n{F}"


def steps_of(events: list) -> list[StepRecord]:
    return [e for e in events if isinstance(e, StepRecord)]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("x = a * b\nx.sum()", "x = a*b   # product\nx.sum()", True),
        ("print('total', t)", "print('Total net revenue:', t)", True),
        ('"""Compute."""\nt = 1', "t = 1", True),
        ("t = (a * b).sum()", "t = a * b.sum()", False),
        ("df['a'].sum()", "df['b'].sum()", False),
        ("x = (", "x   =   (", True),  # does not parse: whitespace collapsed
    ],
)
def test_cell_key_ignores_layout_comments_and_printed_labels(a: str, b: str, same: bool) -> None:
    assert (cell_key(a) == cell_key(b)) is same


def test_a_cell_that_changed_the_session_forgets_earlier_failures() -> None:
    log = AttemptLog()
    log.record_cell(0, "print(t)", ok=False, observation="NameError", failure="NameError: t")
    assert log.failure_of("print( t )") is not None
    log.record_cell(1, "print(1)", ok=True, observation="1")  # reads only
    assert log.failure_of("print(t)") is not None
    log.record_cell(2, "t = 1", ok=True, observation="", changed_state=True)
    assert log.failure_of("print(t)") is None and log.stalled == 0


@pytest.mark.kernel
def test_no_progress_ends_a_turn_that_resends_the_same_failure(tracked: TrackedSession) -> None:
    """A model that only ever resends its failing cell ends the turn after k steps."""
    variants = itertools.cycle(["t = 1 / 0", "t = 1/0  # fixed", "t = 1 /  0"])
    model = ScriptedModel(fn=lambda messages: code(next(variants)))
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        max_steps_per_turn=40,
        no_progress_limit=3,
        repeat_limit=10,  # the no-progress count, not the repeat count, ends this turn
        retry_samples=1,
    )
    events = list(worker.run_turn(1, "t?"))
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer is None and final.ended == "no_progress" and final.steps == 3
    steps = steps_of(events)
    assert [s.problem for s in steps] == [None, "repeated_failure", "repeated_failure"]
    assert [s.execution is not None for s in steps] == [True, False, False]
    # The model is told what it repeated, the failing line and what the names on it hold.
    note = steps[1].observation
    assert "step 0" in note and "ZeroDivisionError" in note and "line 1" in note
    # 3 steps and one extra sample for each of the two repeats
    assert len(model.requests) == 5


@pytest.mark.kernel
def test_consecutive_resends_of_a_cell_that_ran_end_the_turn(tracked: TrackedSession) -> None:
    """A model locked on a cell that ran (sent again after being told it was not run, and
    again when resampled) ends the turn after ``repeat_limit`` such steps in a row; a step
    that does something else starts the count again."""
    sent = ["x = 1", "x = 1", "z = 0", "x = 1", "x = 1", "x = 1"]
    replies = iter(sent)
    model = ScriptedModel(fn=lambda messages: code(next(replies, "x = 1")))
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        max_steps_per_turn=12,
        no_progress_limit=10,
        retry_samples=0,
    )
    assert worker.repeat_limit == 2
    events = list(worker.run_turn(1, "What is x?"))
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer is None and final.ended == "no_progress" and final.steps == 6
    problems = [s.problem for s in steps_of(events)]
    # `z = 0` changed the session, so the next `x = 1` ran again and the count restarted
    assert problems == [None, "repeated_cell", None, None, "repeated_cell", "repeated_cell"]
    assert len(model.requests) == 6
    with pytest.raises(ValueError, match="repeat_limit"):
        Worker(model, GuardedSession(tracked, manager=NullSupervisor()), repeat_limit=0)


@pytest.mark.kernel
def test_best_of_n_runs_the_first_candidate_that_works_and_leaves_no_trace(
    tracked: TrackedSession,
) -> None:
    bad = code("total = sum(values) / 0")
    replies = [
        code("values = [1, 2, 3]"),
        bad,
        bad,  # greedy repeat -> two candidates are drawn
        code("side_effect = 1\ntotal = sum(valus)"),  # candidate 1: fails in its probe
        code("total = sum(values)\nprint(total)"),  # candidate 2: runs and shows something
        "<answer>6</answer>",
    ]
    model = ScriptedModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=2)
    events = list(worker.run_turn(1, "Sum?"))
    steps = steps_of(events)
    assert [s.code for s in steps[:3]] == [
        "values = [1, 2, 3]",
        "total = sum(values) / 0",
        "total = sum(values)\nprint(total)",
    ]
    assert steps[2].execution is not None and steps[2].execution.stdout.strip() == "6"
    # the failing candidate ran only in a fork: none of its names exist
    probe = tracked.kernel.execute("print('side_effect' in globals())")
    assert probe.stdout.strip() == "False"
    # candidates are sampled at the retry temperature, on the very same prompt
    assert [r.temperature for r in model.requests[2:5]] == [0.0, 0.7, 0.7]
    assert model.requests[3].messages == model.requests[2].messages
    # the conversation holds the chosen candidate, not the repeat
    sent = [m.content for m in model.requests[5].messages if m.role == "assistant"]
    assert sum("sum(values) / 0" in c for c in sent) == 1
    assert "print(total)" in sent[-1]
    assert len([e for e in events if isinstance(e, ModelMessage) and e.role == "assistant"]) == 6
    assert events[-1].answer == "6" and events[-1].steps == 4


@pytest.mark.kernel
def test_the_time_budget_ends_a_turn_cleanly(tracked: TrackedSession) -> None:
    clock = {"calls": 0}

    def slow(messages: list[ChatMessage]) -> str:
        clock["calls"] += 1
        time.sleep(0.4)
        return code(f"x{clock['calls']} = {clock['calls']}\nprint(x{clock['calls']})")

    model = ScriptedModel(fn=slow)
    guard = GuardedSession(tracked, manager=NullSupervisor())
    worker = Worker(model, guard, max_steps_per_turn=40, turn_seconds=1.0)
    events = list(worker.run_turn(1, "Slow?"))
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer is None and final.ended == "time"
    assert 1 <= final.steps <= 4 and final.wall_time < 5
    # the turn closed normally: the next one starts and answers
    model2 = ScriptedModel([code("print(x1)"), "<answer>1</answer>"])
    worker.model, worker.turn_seconds = model2, None
    assert list(worker.run_turn(2, "x1?"))[-1].answer == "1"
    assert worker.conversation.turns[0].ended == "time"


@pytest.mark.kernel
def test_an_interrupt_closes_the_turn_then_propagates(tracked: TrackedSession) -> None:
    model = ScriptedModel([code("x = 1\nprint(x)"), KeyboardInterrupt()])
    supervisor_guard = GuardedSession(tracked, manager=NullSupervisor())
    events: list = []
    with pytest.raises(KeyboardInterrupt):
        for event in Worker(model, supervisor_guard).run_turn(1, "x?"):
            events.append(event)
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer is None and final.ended == "interrupt" and final.steps == 1


@pytest.mark.kernel
def test_a_cell_resent_with_nothing_changed_is_not_run_again(tracked: TrackedSession) -> None:
    """Resending a cell that ran (nothing changed since) would show the same again."""
    show = code("import pandas as pd\nframe = pd.read_csv('data/t.csv')\nn: 3\nlen(frame)")
    model = ScriptedModel([show, show, show, "<answer>3</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=1)
    events = list(worker.run_turn(1, "Rows?"))
    steps = steps_of(events)
    assert [s.problem for s in steps] == [None, "repeated_cell", None]
    assert "which already ran" in steps[1].observation and "step 0" in steps[1].observation
    assert steps[1].execution is None
    assert events[-1].answer == "3"


@pytest.mark.kernel
def test_a_silent_cell_with_a_bare_annotation_is_told_so(tracked: TrackedSession) -> None:
    model = ScriptedModel([code("v = 2 * 3\nv: 1234.56"), "<answer>6</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "v?")
    )
    note = steps_of(events)[0].observation
    assert "v is int 6" in note and "`v: 1234.56` computes nothing" in note


@pytest.mark.kernel
def test_a_reply_whose_code_is_no_python_is_resampled_before_it_runs(
    tracked: TrackedSession,
) -> None:
    """A traceback copied from the observation as the next cell never runs: a candidate
    that is Python takes its place."""
    echoed = code("Cell In[7], line 1\n----> 1 total = sum(values)\n\nKeyError: 'x'")
    replies = [
        echoed,
        code("values = [4, 5]\nprint(sum(values))"),  # candidate 1
        "<answer>9</answer>",
    ]
    model = ScriptedModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=1)
    steps = steps_of(list(worker.run_turn(1, "Sum?")))
    assert steps[0].code == "values = [4, 5]\nprint(sum(values))"
    assert all(s.execution is None or s.execution.ok for s in steps)
    # a magic line is the kernel's to run: not resampled
    model = ScriptedModel([code("%time x = 4 + 5\nprint(x)"), "<answer>9</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=1)
    steps = steps_of(list(worker.run_turn(1, "Sum?")))
    assert steps[0].code is not None and steps[0].code.startswith("%time")


@pytest.mark.kernel
def test_a_stalled_turn_whose_outputs_show_a_result_gets_one_last_reply(
    tracked: TrackedSession,
) -> None:
    """A model that printed a result, then only failed, is asked once for its answer
    before the turn ends (a small model often goes on past its result); a reply that is
    not an accepted answer ends the turn there."""
    for last, answer in (("<answer>60</answer>", "60"), (code("t['zz']"), None)):
        replies = iter(
            [
                code("import pandas as pd\nt = pd.read_csv('data/t.csv')\nt['b'].sum()"),
                *(code(f"t['z{i}']") for i in range(3)),
                last,
            ]
        )
        model = ScriptedModel(fn=lambda messages, r=replies: next(r))
        worker = Worker(
            model,
            GuardedSession(tracked, manager=NullSupervisor()),
            max_steps_per_turn=12,
            no_progress_limit=3,
            retry_samples=0,
        )
        events = list(worker.run_turn(1, "What is the total of b?"))
        final = events[-1]
        assert isinstance(final, AnswerRecorded)
        assert final.answer == answer and final.steps == 5
        assert final.ended == ("answer" if answer else "no_progress")
        assert len(model.requests) == 5  # one last call, and no more
        asked = [e for e in events if isinstance(e, ModelMessage) and e.role == "user"]
        assert "last step" in asked[-2 if answer is None else -1].content


@pytest.mark.kernel
def test_a_stalled_turn_that_showed_nothing_ends_without_a_last_reply(
    tracked: TrackedSession,
) -> None:
    """With no output to answer from, a stalled turn ends at once (no extra call)."""
    replies = iter([code(f"t['z{i}']") for i in range(3)])
    model = ScriptedModel(fn=lambda messages: next(replies))
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        max_steps_per_turn=12,
        no_progress_limit=3,
        retry_samples=0,
    )
    final = list(worker.run_turn(1, "What is the total of b?"))[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.ended == "no_progress" and final.steps == 3 and len(model.requests) == 3
