"""The worker loop against a real kernel with scripted models and supervisors."""

from __future__ import annotations

import pytest
from worker_helpers import FakeSupervisor

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatResponse, ScriptedModel
from stateguard.manager import Hint, NullSupervisor
from stateguard.question.spec import Revision
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ManagerLogged,
    ModelMessage,
    StepRecord,
    TrajectoryEvent,
    TurnStarted,
)
from stateguard.worker.loop import Worker, revised_line, writer_lines

pytestmark = pytest.mark.kernel

F = "```"


def code(src: str, thought: str = "Next step.") -> str:
    return f"{thought}\n{F}python\n{src}\n{F}"


def user_contents(model: ScriptedModel, call: int) -> list[str]:
    return [m.content for m in model.requests[call].messages if m.role == "user"]


def of_type(events: list[TrajectoryEvent], cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def test_two_turns_share_the_kernel_and_the_history(tracked: TrackedSession) -> None:
    model = ScriptedModel(
        [
            code("import pandas as pd\ndf = pd.read_csv('data/t.csv')\nint(df.a.sum())"),
            "The output shows 6. <answer>6</answer>",
            code("print(df.b.mean())"),  # df from turn 1 is still there
            "<answer>20.0</answer>",
        ]
    )
    worker = Worker(
        model, GuardedSession(tracked, manager=NullSupervisor()), data_files="- data/t.csv"
    )
    first = list(worker.run_turn(1, "Sum of a?"))
    second = list(worker.run_turn(2, "Mean of b?", context="b is in cents."))

    assert isinstance(first[0], TurnStarted) and isinstance(first[-1], AnswerRecorded)
    assert first[-1].answer == "6" and first[-1].steps == 2
    assert second[-1].answer == "20.0" and second[-1].steps == 2
    steps = of_type(first + second, StepRecord)
    assert [s.step for s in steps] == [0, 1, 2, 3]
    assert steps[0].execution is not None and steps[0].execution.ok
    assert steps[0].observation == "Result:\n6"
    assert steps[0].cell is not None and any(v.startswith("df@") for v in steps[0].cell.created)
    assert steps[2].observation == "Output:\n20.0"
    assert steps[1].answer == "6" and steps[1].execution is None
    system = [m for m in of_type(first + second, ModelMessage) if m.role == "system"]
    assert len(system) == 1 and "data/t.csv" in system[0].content
    # The second turn's first request carries turn 1 and the new context + question.
    second_turn_request = user_contents(model, 2)
    assert any("Sum of a?" in c for c in second_turn_request)
    assert "b is in cents." in second_turn_request[-1] and "Mean of b?" in second_turn_request[-1]
    assert any("<answer>6</answer>" in m.content for m in model.requests[2].messages)
    assistant = [m for m in of_type(first, ModelMessage) if m.role == "assistant"]
    assert all(m.prompt_tokens > 0 for m in assistant)


def test_malformed_replies_get_corrective_messages_and_run_nothing(
    tracked: TrackedSession,
) -> None:
    replies: list = [
        "",
        "I would sum column a.",
        # cut by the token limit: a block that is really unfinished
        ChatResponse(content=f"{F}python\nz = 3", model="m", finish_reason="length"),
        "<answer>6</answer>",  # no code has run in this turn yet
        code("import pandas as pd\nint(pd.read_csv('data/t.csv').a.sum())"),
        "<answer>6</answer>",
    ]
    model = ScriptedModel(replies)
    guard = GuardedSession(tracked, manager=NullSupervisor())
    events = list(Worker(model, guard, no_progress_limit=5).run_turn(1, "Sum of a?"))
    steps = of_type(events, StepRecord)
    assert [s.problem for s in steps] == [
        "empty",
        "no_action",
        "reply_over_tokens",  # the token cap ended it: counted, whatever it holds
        "answer_without_code",
        None,
        None,
    ]
    assert all(s.execution is None for s in steps[:4])
    probe = tracked.kernel.execute("print('z' in globals())")
    assert probe.stdout.strip() == "False"
    # Each corrective message is the last user content of the following request.
    for i in range(4):
        assert user_contents(model, i + 1)[-1].endswith(steps[i].observation)
    assert "Verify it by computation first" in steps[3].observation
    assert events[-1].answer == "6" and events[-1].steps == 6
    assert events[-1].ended == "answer"


def test_several_blocks_run_as_one_cell_in_order(tracked: TrackedSession) -> None:
    model = ScriptedModel([f"{code('x = 1')}\n{code('y = x + 1')}", "<answer>2</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "y?")
    )
    steps = of_type(events, StepRecord)
    assert steps[0].problem is None and steps[0].code == "x = 1\n\ny = x + 1"
    assert steps[0].execution is not None and steps[0].execution.ok
    assert tracked.kernel.execute("print(y)").stdout.strip() == "2"


def test_generation_stops_after_the_block_and_the_fence_is_closed(
    tracked: TrackedSession,
) -> None:
    """The stop sequence cuts the text after a block; the loop closes the fence again."""
    reply = f"Compute.\n{F}python\nv = 7\nv\n{F}\n\nThis will show 7. <answer>8</answer>"
    model = ScriptedModel([reply, "<answer>7</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "v?")
    )
    assert model.requests[0].stop is not None and model.requests[0].stop[0] == "\n```\n\n"
    steps = of_type(events, StepRecord)
    assert steps[0].execution is not None and steps[0].execution.result == "7"
    assert "set aside" not in user_contents(model, 1)[-1]  # the answer text was cut off
    assert events[-1].answer == "7"


def test_supervisor_hints_are_injected_verbatim(tracked: TrackedSession) -> None:
    begin = Hint(kind="state", text="S1 holds df@v1 loaded from data/t.csv.", state_ids=("S1",))
    after = Hint(kind="state", text="df@v1 is current; nothing is stale.")
    supervisor = FakeSupervisor(begin={1: [begin]}, after={0: [after]})
    model = ScriptedModel(
        [code("import pandas as pd\ndf = pd.read_csv('data/t.csv')\nlen(df)"), "<answer>3</answer>"]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=supervisor)).run_turn(1, "How many rows?")
    )
    hints = of_type(events, HintDelivered)
    assert [(h.hint, h.step) for h in hints] == [(begin, None), (after, 0)]
    assert any(begin.text in c for c in user_contents(model, 0))
    assert after.text in user_contents(model, 1)[-1]
    assert "Result:\n3" in user_contents(model, 1)[-1]
    assert [e.event.type for e in of_type(events, ManagerLogged)] == ["activate"]
    views = [v for name, v in supervisor.calls if name == "after_step"]
    assert len(views) == 1 and views[0].code is not None and views[0].cell is not None
    assert supervisor.calls[-1] == ("end_turn", (1, "3"))


def test_rejected_answer_injects_repairs_and_the_loop_continues(tracked: TrackedSession) -> None:
    repair = Hint(kind="repair", text="cost@v1 is stale: rate was revised in cell 3.")
    supervisor = FakeSupervisor(reject=1, repair=repair, llm_calls_per_review=2)
    model = ScriptedModel(
        [
            code("rate = 0.47\ncost = 100 * rate\ncost"),
            "<answer>42</answer>",
            code("cost = 100 * rate\ncost"),
            "<answer>47</answer>",
        ]
    )
    # 42 was never shown: the number check would stop it before the review this tests
    worker = Worker(model, GuardedSession(tracked, manager=supervisor), check_answer_numbers=False)
    events = list(worker.run_turn(1, "Cost?"))
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer == "47" and final.steps == 4
    assert final.manager_llm_calls == 4
    assert [h.hint for h in of_type(events, HintDelivered)] == [repair]
    request_after_rejection = user_contents(model, 2)[-1]
    assert repair.text in request_after_rejection
    assert "not accepted" in request_after_rejection
    reviews = [v.answer for name, v in supervisor.calls if name == "review_answer"]
    assert reviews == ["42", "47"]
    assert [e.event.type for e in of_type(events, ManagerLogged)] == ["activate", "repair"]


def test_a_refused_answer_and_a_repeated_cell_quote_the_line_that_wrote_what_was_named(
    tracked: TrackedSession,
) -> None:
    # the manager names t['profit']@v1; the worker quotes the line of the cell that wrote it
    repair = Hint(kind="repair", text="t['profit']@v1 is stale.", variables=("t['profit']@v1",))
    supervisor = FakeSupervisor(reject=1, repair=repair)
    model = ScriptedModel(
        [
            code(
                "import pandas as pd\nt = pd.DataFrame({'c': [1.0, 2.0]})\n"
                't["profit"] = t["c"] * 0.09'
            ),
            code('t["profit"].sum()'),
            "<answer>0.27</answer>",
            code('t["profit"].sum()'),  # a repeat of the cell that read it
            code("t['profit'] = t['c'] * 0.04\nt['profit'].sum()"),
            "<answer>0.12</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=supervisor), retry_samples=0)
    events = list(worker.run_turn(1, "Profit?"))
    line = 'cell 0 wrote `t[\'profit\']` with `t["profit"] = t["c"] * 0.09`'
    assert line in user_contents(model, 3)[-1], user_contents(model, 3)[-1]
    assert "not accepted" in user_contents(model, 3)[-1]
    assert line in user_contents(model, 4)[-1]  # the repeat's note
    assert "was not run again" in user_contents(model, 4)[-1]
    assert events[-1].answer == "0.12"
    # the whole table's line; unknown versions quote nothing
    assert writer_lines(tracked.graph, ["t@v1", "u@v1", "t['profit']@v9"]) == [
        ("t", 0, "t = pd.DataFrame({'c': [1.0, 2.0]})")
    ]


@pytest.mark.parametrize(
    ("line", "revision", "expected"),
    [
        (
            "t['p'] = (t['b'] + t['b'] * 0.09) - t['c']",
            (9, 4, True),
            "t['p'] = t['b'] + t['b'] * 0.04 - t['c']",
        ),
        (
            "t['x'] = t['a'] * 1.09 - t['b'] * 0.91",
            (9, 4, True),
            "t['x'] = t['a'] * 1.04 - t['b'] * 0.96",
        ),
        ("cost = 180 * n", (180, 195, False), "cost = 195 * n"),
        ("t['x'] = t['a'] * 2", (9, 4, True), None),  # no number of the old value
        ("cost = 0 * n", (0, 5, False), None),  # a 0 says nothing
        ("t['x'] = (", (9, 4, True), None),  # does not parse
    ],
)
def test_a_line_is_rewritten_with_a_revised_value(
    line: str, revision: tuple[float, float, bool], expected: str | None
) -> None:
    old, new, percent = revision
    assert revised_line(line, Revision(old=old, new=new, percent=percent)) == expected


def test_a_refusal_for_a_revised_value_quotes_the_line_with_the_value_revised(
    tracked: TrackedSession,
) -> None:
    # turn 1 writes t['profit'] with 9 %; turn 2 revises it to 4 %; turn 3 reads the old
    # column and the manager refuses: the note gives that line with the revised value
    repair = Hint(kind="repair", text="t['profit']@v1 is stale.", variables=("t['profit']@v1",))
    supervisor = FakeSupervisor(reject=0, repair=repair)
    model = ScriptedModel(
        [
            code(
                "import pandas as pd\nt = pd.DataFrame({'c': [1.0, 2.0]})\n"
                "t['profit'] = t['c'] * 0.09\nt['profit'].sum()"
            ),
            "<answer>0.27</answer>",
            code("len(t)"),
            "<answer>2</answer>",
            "<answer>2</answer>",  # again, once told of the revision
            code("(t['profit'] > 0.1).sum()"),
            "<answer>1</answer>",
            code("t['profit'] = t['c'] * 0.04\n(t['profit'] > 0.1).sum()"),
            "<answer>0</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=supervisor), retry_samples=0)
    assert list(worker.run_turn(1, "What is the profit?"))[-1].answer == "0.27"
    context = "The rate was revised from 9% to 4%."
    assert list(worker.run_turn(2, "How many rows?", context=context))[-1].answer == "2"
    supervisor.reject_left = 1
    events = list(worker.run_turn(3, "How many rows have a profit above 0.1?"))
    note = user_contents(model, 7)[-1]
    assert "not accepted" in note
    assert "cell 0 wrote `t['profit']` with `t['profit'] = t['c'] * 0.09`" in note, note
    assert "(from 9 % to 4 %)" in note
    assert "that line is `t['profit'] = t['c'] * 0.04`: run it first" in note
    assert events[-1].answer == "0"


def test_step_budget_exhaustion_records_no_answer(tracked: TrackedSession) -> None:
    model = ScriptedModel(fn=lambda messages: code("x = 1"))
    supervisor = FakeSupervisor()
    events = list(
        Worker(
            model,
            GuardedSession(tracked, manager=supervisor),
            max_steps_per_turn=3,
            retry_samples=0,
        ).run_turn(1, "Never answered?")
    )
    final = events[-1]
    assert isinstance(final, AnswerRecorded)
    assert final.answer is None and final.steps == 3
    assert len(model.requests) == 3
    assert "last step" in user_contents(model, 2)[-1]
    assert supervisor.calls[-1] == ("end_turn", (1, None))


def test_code_and_answer_together_defers_the_answer(tracked: TrackedSession) -> None:
    supervisor = FakeSupervisor()
    model = ScriptedModel([f"{code('print(2 + 2)')}\n<answer>5</answer>", "<answer>4</answer>"])
    events = list(Worker(model, GuardedSession(tracked, manager=supervisor)).run_turn(1, "2 + 2?"))
    assert events[-1].answer == "4"
    reviews = [v.answer for name, v in supervisor.calls if name == "review_answer"]
    assert reviews == ["4"]
    assert "set aside" in user_contents(model, 1)[-1]


def test_long_output_is_truncated_and_errors_are_observed(tracked: TrackedSession) -> None:
    model = ScriptedModel(
        [
            code("for i in range(3000):\n    print('row', i)"),
            code("undefined_name + 1"),
            "<answer>done</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), observation_chars=500)
    steps = of_type(list(worker.run_turn(1, "Print rows")), StepRecord)
    assert "row 0" in steps[0].observation and "row 2999" in steps[0].observation
    assert "characters omitted" in steps[0].observation
    assert len(steps[0].observation) < 600
    assert steps[1].execution is not None and steps[1].execution.status == "error"
    assert "NameError" in steps[1].observation


def test_kernel_death_restarts_and_tells_the_model(tracked: TrackedSession) -> None:
    model = ScriptedModel(
        [
            code("keep = 1\nimport os\nos._exit(1)"),
            code("'keep' in globals()"),
            "<answer>restarted</answer>",
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "Crash?")
    )
    steps = of_type(events, StepRecord)
    assert steps[0].execution is not None and steps[0].execution.status == "dead"
    assert "restarted" in user_contents(model, 1)[-1]
    assert steps[1].execution is not None and steps[1].execution.result == "False"
    assert events[-1].answer == "restarted"


@pytest.mark.kernel
def test_resent_failing_code_is_not_run_again(tracked: TrackedSession) -> None:
    """Greedy small models resend a failing cell; the loop says so instead of re-running it."""
    bad = "```python\nx = 1 / 0\n```"
    model = ScriptedModel([bad, bad, "```python\nx = 1\nx\n```", "<answer>1</answer>"])
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        max_steps_per_turn=6,
        retry_samples=0,
    )
    events = list(worker.run_turn(1, "What is x?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert [s.problem for s in steps] == [None, "repeated_failure", None, None]
    assert steps[0].execution is not None and steps[0].execution.status == "error"
    assert steps[1].execution is None  # not executed again
    assert "ZeroDivisionError" in steps[1].observation
    assert "ZeroDivisionError" in model.requests[2].messages[-1].content
    assert events[-1].answer == "1"


def test_after_a_resent_failure_the_next_call_samples(tracked: TrackedSession) -> None:
    bad = "```python\nx = 1 / 0\n```"
    model = ScriptedModel([bad, bad, "```python\nx = 1\nx\n```", "<answer>1</answer>"])
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        max_steps_per_turn=6,
        retry_samples=0,
    )
    list(worker.run_turn(1, "What is x?"))
    assert [r.temperature for r in model.requests] == [0.0, 0.0, 0.7, 0.0]


def test_an_answer_refused_on_review_gives_way_to_the_printed_value_once(
    tracked: TrackedSession,
) -> None:
    supervisor = FakeSupervisor(reject=1)
    model = ScriptedModel([code("cost = 94.0 / 2\ncost"), "<answer>cost: 47.5</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=supervisor), check_answer_numbers=False)
    events = list(worker.run_turn(1, "What is the cost, rounded to 2 decimals?"))
    assert events[-1].answer == "47.00" and len(model.requests) == 2
    reviews = [v.answer for name, v in supervisor.calls if name == "review_answer"]
    assert reviews == ["cost: 47.5", "47.00"]
    # refused again: back to the model, which reads the note
    supervisor = FakeSupervisor(reject=2)
    model = ScriptedModel(
        [code("cost = 94.0 / 2\ncost"), "<answer>47.5</answer>", "<answer>47.00</answer>"]
    )
    worker = Worker(model, GuardedSession(tracked, manager=supervisor), check_answer_numbers=False)
    events = list(worker.run_turn(1, "What is the cost, rounded to 2 decimals?"))
    reviews = [v.answer for name, v in supervisor.calls if name == "review_answer"]
    assert reviews == ["47.5", "47.00", "47.00"] and events[-1].answer == "47.00"


def test_the_refused_value_in_another_form_is_not_sent_to_review_again(
    tracked: TrackedSession,
) -> None:
    # the review refused `cost: 47.0` (stale, say): `47.00` from the printed output holds
    # the same number, so the model is asked instead
    supervisor = FakeSupervisor(reject=1)
    model = ScriptedModel(
        [
            code("cost = 94.0 / 2\ncost"),
            "<answer>cost: 47.0</answer>",
            "<answer>cost: 47.00</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=supervisor), check_answer_numbers=False)
    events = list(worker.run_turn(1, "What is the cost, rounded to 2 decimals?"))
    reviews = [v.answer for name, v in supervisor.calls if name == "review_answer"]
    assert reviews == ["cost: 47.0", "cost: 47.00"] and len(model.requests) == 3
    assert events[-1].answer == "cost: 47.00"


def test_several_numbers_for_the_one_value_asked_give_way_to_the_printed_value(
    tracked: TrackedSession,
) -> None:
    model = ScriptedModel(
        [code("cost = 94.0 / 2\ncost"), "<answer>orders: 12, total: 5.5, cost: 47.00</answer>"]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "What is the cost, rounded to 2 decimals?"))
    assert events[-1].answer == "47.00" and len(model.requests) == 2
    # an earlier question's form, one number in it
    model = ScriptedModel(
        [code("cost = 94.0 / 2\ncost"), "<answer>city: Bristol, net: 47.00</answer>"]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "What is the cost, rounded to 2 decimals?"))
    assert events[-1].answer == "47.00" and len(model.requests) == 2
    # one labelled value is the value asked, labelled
    model = ScriptedModel([code("cost = 94.0 / 2\ncost"), "<answer>cost: 47.00</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "What is the cost, rounded to 2 decimals?"))
    assert events[-1].answer == "cost: 47.00" and len(model.requests) == 2
    # a form of several fields keeps its numbers
    model = ScriptedModel(
        [code("cost = 94.0 / 2\nrows = 3\ncost, rows"), "<answer>cost: 47.00, rows: 3</answer>"]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    question = "Cost and rows? Answer as `cost: <value rounded to 2 decimals>, rows: <count>`."
    assert list(worker.run_turn(2, question))[-1].answer == "cost: 47.00, rows: 3"


FORM_QUESTION = (
    "How many rows are there, and what is the total of b? "
    "Answer as `rows: <count>, total: <number>`."
)
COUNT_CELL = "import pandas as pd\nt = pd.read_csv('data/t.csv')\nprint(len(t), t.b.sum())"


def test_the_answer_written_in_the_form_beside_a_comment_only_block_is_an_answer(
    tracked: TrackedSession,
) -> None:
    """A thought writing every field of the question's form with numbers the session
    showed, then a block of comments: the model means to answer. Before a cell of the turn
    ran it is asked to compute (not told its block held only comments, which it answers
    with the same reply); after, it is the answer."""
    done = f"{F}python\n# No further steps needed\n{F}"
    model = ScriptedModel(
        [
            code(COUNT_CELL),
            "<answer>3</answer>",
            f"rows: 3, total: 60\n\n{done}",
            code("print(len(t), int(t.b.sum()))"),
            f"rows: 3, total: 60\n\n{done}",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    list(worker.run_turn(1, "How many rows are there?"))
    events = list(worker.run_turn(2, FORM_QUESTION))
    steps = of_type(events, StepRecord)
    assert [s.problem for s in steps] == ["answer_without_code", None, None]
    assert "Verify it by computation first" in steps[0].observation
    assert events[-1].answer == "rows: 3, total: 60" and events[-1].ended == "answer"


def test_a_guessed_number_in_the_form_beside_a_comment_only_block_is_no_answer(
    tracked: TrackedSession,
) -> None:
    """75 appears in no output: a guess, not an answer to verify (told to verify it, a small
    model re-checks the other field and copies the guess again)."""
    model = ScriptedModel(
        [
            f"rows: 3, total: 75\n\n{F}python\n# done\n{F}",
            code(COUNT_CELL),
            "<answer>rows: 3, total: 60</answer>",
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, FORM_QUESTION)
    )
    steps = of_type(events, StepRecord)
    assert steps[0].problem == "guessed_form" and steps[0].answer is None
    # the note names the field to compute, not the guessed value (a small model copies it)
    assert "a value for `total` that no output" in steps[0].observation
    assert "`rows`" not in steps[0].observation and "75" not in steps[0].observation
    assert events[-1].answer == "rows: 3, total: 60"


def test_a_malformed_reply_sent_again_word_for_word_is_resampled(
    tracked: TrackedSession,
) -> None:
    """Greedy decoding sends the same malformed reply whatever the note says; the second
    time, a candidate is sampled in its place."""
    same = f"Nothing to run.\n{F}python\n# done\n{F}"
    model = ScriptedModel(
        [
            same,
            same,  # word for word: resampled
            code(COUNT_CELL),  # the candidate, taken
            "<answer>rows: 3, total: 60</answer>",
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, FORM_QUESTION)
    )
    steps = of_type(events, StepRecord)
    assert [s.problem for s in steps] == ["commented_code", None, None]
    assert model.requests[2].temperature > 0
    candidates = [m for m in of_type(events, ModelMessage) if m.candidate]
    assert len(candidates) == 1
    assert events[-1].answer == "rows: 3, total: 60"


def test_a_comment_only_block_without_every_field_of_the_form_stays_commented_code(
    tracked: TrackedSession,
) -> None:
    model = ScriptedModel(
        [
            f"rows: 3\n\n{F}python\n# sum b next\n{F}",
            code(COUNT_CELL),
            "<answer>rows: 3, total: 60</answer>",
        ]
    )
    guard = GuardedSession(tracked, manager=NullSupervisor())
    events = list(Worker(model, guard).run_turn(1, FORM_QUESTION))
    steps = of_type(events, StepRecord)
    assert steps[0].problem == "commented_code"
    assert events[-1].answer == "rows: 3, total: 60"
