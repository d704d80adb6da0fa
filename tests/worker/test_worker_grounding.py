"""An answer's numbers must be ones the session showed."""

from __future__ import annotations

import pytest
from worker_helpers import answer_after_one_cell

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.doubts import literal_numbers
from stateguard.worker.events import StepRecord
from stateguard.worker.grounding import held_by, unclaimed, unseen_numbers
from stateguard.worker.loop import Worker

SHOWN = ["Output:\n1200 209637.4127", "Result:\n0.51236", "Question: revenue of 2024-06?"]


def _register_and_shipments():
    """Two loaded tables sharing ``sender_id``: a register (``reg``) and shipments (``ship``)."""
    from stateguard.worker.preload import Preload

    return Preload(
        code="import pandas as pd\n"
        "reg = pd.DataFrame({'sender_id': ['a', 'b'], 'sector': ['x', 'y']})\n"
        "ship = pd.DataFrame({'sender_id': ['a', 'b', 'a'], 'kg': [1.0, 2.0, 3.0]})",
        frames={"reg": "data/reg.csv", "ship": "data/ship.csv"},
        columns={"reg": ("sender_id", "sector"), "ship": ("sender_id", "kg")},
    )


@pytest.mark.parametrize(
    ("answer", "unseen"),
    [
        ("orders: 1200, net_revenue: 209637.41", []),  # rounded at the answer's precision
        ("orders: 1,200", []),
        ("51.24%", []),  # a shown fraction as a percentage
        ("2024-06", []),  # the text is shown
        ("rounded to 2 decimals: 3", []),  # small integers are not checked
        ("orders: 74, net_revenue: 1234.56", ["74", "1234.56"]),
        ("209637.5", ["209637.5"]),  # more than rounding apart
        ("10.00", ["10.00"]),  # 10 is no number of its own in 1200 or 209637.4127
        ("answer: 12", ["12"]),  # nor 12 in 0.51236
        ("1200.0", []),
    ],
)
def test_unseen_numbers(answer: str, unseen: list[str]) -> None:
    assert unseen_numbers(answer, SHOWN) == unseen


@pytest.mark.kernel
def test_an_answer_with_numbers_never_shown_is_not_submitted(tracked: TrackedSession) -> None:
    fence = "```"
    model = ScriptedModel(
        [
            f"{fence}python\nimport pandas as pd\nlen(pd.read_csv('data/t.csv'))\n{fence}",
            f"{fence}python\nrows: 74\n{fence}",  # quoted back by the annotation note
            "<answer>rows: 74</answer>",  # made up
            "<answer>rows: 3</answer>",
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "Rows?")
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert [s.problem for s in steps] == [None, None, "ungrounded_answer", None]
    assert "rows: 74" in steps[1].observation
    assert "74 appear in no output" in steps[2].observation
    assert events[-1].answer == "rows: 3"


@pytest.mark.kernel
def test_an_answer_leaving_out_a_field_of_the_form_is_not_submitted(
    tracked: TrackedSession,
) -> None:
    fence = "```"
    question = "How many rows, and the total of x? Answer as `rows: <count>, total: <sum>`."
    model = ScriptedModel(
        [
            f"{fence}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\nlen(t)\n{fence}",
            "<answer>3</answer>",  # the count alone: the form has two fields
            "<answer>rows: 3, total: 98765</answer>",  # numbers never shown: refused as well
            f"{fence}python\nprint(len(t))\nprint(t.iloc[:, 0].sum())\n{fence}",
            "<answer>rows: 3</answer>",  # still one field short, printed values fill it
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    problems = [s.problem for s in steps]
    assert problems[:3] == [None, "missing_fields", "ungrounded_answer"], problems
    assert "`rows: <count>, total: <sum>`" in steps[1].observation
    assert "has no `rows` or `total`" in steps[1].observation
    answer = events[-1].answer
    assert answer is not None and answer.startswith("rows: 3, total: "), answer


@pytest.mark.kernel
def test_a_bare_answer_fills_the_field_the_setups_output_leaves_open(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\nt = pd.read_csv('data/t.csv')\n"
        "print('t:', t.shape[0], 'rows x', t.shape[1], 'columns')",
        frames={"t": "data/t.csv"},
    )
    question = "How many rows, and the total of b? Answer as `t: <count>, total: <sum>`."
    model = ScriptedModel([f"{fence}python\nt['b'].sum()\n{fence}", "<answer>60</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    # the setup printed `t: 3 rows x 2 columns`; the model's bare 60 is the one open field
    assert events[-1].answer == "t: 3, total: 60"
    # a bare value that was never shown fills nothing (the newest output shows two values,
    # so it fills nothing by itself either)
    replies = [f"{fence}python\nt['b'].sum(), t['a'].sum()\n{fence}", "<answer>61</answer>"]
    model = ScriptedModel([*replies, "<answer>t: 3, total: 60</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert "ungrounded_answer" in problems, problems
    assert events[-1].answer == "t: 3, total: 60" and len(model.requests) == 3


def test_missing_labels_reads_the_form_not_the_order() -> None:
    from stateguard.worker.answer_format import AnswerSpec

    spec = AnswerSpec.from_question("Answer as `orders: <count>, net_revenue: <total>`.")
    assert spec is not None
    assert spec.missing_labels("209637.41") == ["orders", "net_revenue"]
    assert spec.missing_labels("Net revenue: 5, ORDERS: 2") == []
    single = AnswerSpec.from_question("What is the total? Answer as `total: <value>`.")
    assert single is not None and single.missing_labels("5") == []


@pytest.mark.kernel
def test_an_answer_of_none_is_replaced_by_the_printed_value_or_refused(
    tracked: TrackedSession,
) -> None:
    fence = "```"
    question = "What is the average of x?"
    model = ScriptedModel(
        [
            f"{fence}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\n"
            f"print('average_x:', t.iloc[:, 0].mean())\n{fence}",
            "<answer>None</answer>",  # the printed value holds the answer
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    answer = events[-1].answer
    assert answer is not None and answer not in ("None", "") and float(answer) > 0, answer
    # near miss: nothing printed that could stand for the answer, so "None" is refused
    model = ScriptedModel(
        [
            f"{fence}python\nt = pd.read_csv('data/t.csv')\n{fence}",
            "<answer>None</answer>",
            f"{fence}python\nprint(len(t))\n{fence}",
            "<answer>3</answer>",
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(
            2, "How many rows are there?"
        )
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert "valueless_answer" in [s.problem for s in steps]
    assert events[-1].answer == "3"
    # near miss: a question asking which things may be answered "none"
    model = ScriptedModel(
        [f"{fence}python\nprint(list(t.columns[:0]))\n{fence}", "<answer>none</answer>"]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(
            3, "Which columns are empty?"
        )
    )
    assert events[-1].answer == "none"


@pytest.mark.kernel
def test_an_earlier_turns_missing_answer_copied_as_the_answer_is_refused(
    tracked: TrackedSession,
) -> None:
    """An earlier turn that ended without an answer is shown as ``none (no progress was
    made)``; a model that gives that line as its answer to a count has given no value."""
    fence = "```"
    count = f"{fence}python\nimport pandas as pd\nt = pd.DataFrame({{'a': [1, 2, 3]}})\n{fence}"
    model = ScriptedModel(
        [
            count,
            "<answer>none (no progress was made)</answer>",
            f"{fence}python\nprint(len(t))\n{fence}",
            "<answer>3</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "How many rows are there?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert [s.problem for s in steps] == [None, "valueless_answer", None, None]
    assert events[-1].answer == "3"


@pytest.mark.kernel
def test_an_answer_quoting_the_error_of_a_failed_cell_is_refused(tracked: TrackedSession) -> None:
    """A cell failed with a KeyError; an answer that quotes it gives no value, however
    often it is given. An error the session never raised is not evidence of one."""
    fence = "```"
    failing = "import pandas as pd\nt = pd.DataFrame({'a': [1, 2]})\nt['town']"
    quoted = "<answer>town: KeyError: 'town'</answer>"
    total = f"{fence}python\nprint(t['a'].sum())\n{fence}"
    replies = [f"{fence}python\n{failing}\n{fence}", quoted, quoted, total, "<answer>3</answer>"]
    # turn 2, the near miss: the session raised no ValueError, so its name is no quote
    replies += [
        f"{fence}python\nprint(t['a'].max())\n{fence}",
        "<answer>2 (no ValueError: ok)</answer>",
    ]
    worker = Worker(ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "What is the total of a?"))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert problems == [None, "error_answer", "error_answer", None, None], problems
    assert events[-1].answer == "3"
    events = list(worker.run_turn(2, "What is the largest a?"))
    assert "error_answer" not in [e.problem for e in events if isinstance(e, StepRecord)]
    assert events[-1].answer == "2 (no ValueError: ok)"


@pytest.mark.kernel
def test_an_answer_that_never_used_a_value_the_question_names_is_held_back_once(
    tracked: TrackedSession,
) -> None:
    fence = "```"
    # the data's values come from a file in a real session: keep them out of the code here
    setup = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'ch': ['enilnO'[::-1], 'Store', 'Store'], 'b': [1, 2, 3]})"
    )
    question = "What is the total of b for the Online channel?"
    replies = [
        f"{fence}python\n{setup}\nt['b'].sum()\n{fence}",
        "<answer>6</answer>",  # all channels: 'Online' is a value of t['ch'] no code used
        f"{fence}python\nt[t['ch'] == 'Online']['b'].sum()\n{fence}",
        "<answer>1</answer>",
    ]
    model = ScriptedModel(replies)
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    held = [s for s in steps if s.problem == "unused_value"]
    assert len(held) == 1 and "'Online' (a value of `t['ch']`)" in held[0].observation
    assert events[-1].answer == "1"
    # asked once only: the same answer given again is submitted
    model = ScriptedModel([replies[0], replies[1], replies[1]])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    assert events[-1].answer == "6"
    # a name that merely holds the value (online_rows) is no use of it
    named = f"{fence}python\n{setup}\nonline_rows = t\nonline_rows['b'].sum()\n{fence}"
    model = ScriptedModel([named, replies[1], replies[2], replies[3]])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    assert [s.problem for s in events if isinstance(s, StepRecord)][1] == "unused_value"
    assert events[-1].answer == "1"
    # a word of the question that is no value of the data is never held against the answer
    model = ScriptedModel([replies[0], replies[1]])
    other = "What is the total of b across every Online and offline sale?"
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    assert list(worker.run_turn(1, other.replace("Online", "web")))[-1].answer == "6"


@pytest.mark.kernel
def test_a_label_of_the_form_is_no_use_of_the_value_it_names(tracked: TrackedSession) -> None:
    """The form's label ``refunded`` is also a value of the data: an answer that writes the
    label over a count of the returned rows never used the value, and is held back once."""
    fence = "```"
    setup = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'state': ['dednufer'[::-1], 'returned', 'returned']})"
    )
    question = (
        "How many rows are there, and how many of them were refunded? "
        "Answer as `rows: <count>, refunded: <count>`."
    )
    returned = f"{fence}python\n{setup}\nprint(len(t), (t['state'] == 'returned').sum())\n{fence}"
    refunded = f"{fence}python\nprint(len(t), (t['state'] == 'refunded').sum())\n{fence}"
    replies = [returned, "<answer>rows: 3, refunded: 2</answer>", refunded]
    replies += ["<answer>rows: 3, refunded: 1</answer>"]
    worker = Worker(ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, question))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert problems == [None, "unused_value", None, None], problems
    assert events[-1].answer == "rows: 3, refunded: 1"


def test_unlabelled_drops_the_forms_labels_only() -> None:
    from stateguard.worker.answer_format import AnswerSpec

    spec = AnswerSpec.from_question("Answer as `rows: <count>, refunded: <count>`.")
    assert spec is not None
    assert "refunded" not in spec.unlabelled("rows: 3, Refunded: 1")
    assert "refunded" in spec.unlabelled("rows: 3, refunded rows 1")  # no label there
    plain = AnswerSpec.from_question("How many rows are there?")
    assert plain is not None and plain.unlabelled("refunded: 1") == "refunded: 1"


@pytest.mark.kernel
def test_a_value_selected_above_the_line_that_failed_was_used(tracked: TrackedSession) -> None:
    """A cell selects the question's value on its first line and fails on its second: the
    selection ran, so an answer computed later from it used the value. A value only on the
    failing line was never used."""
    fence = "```"
    setup = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'ch': ['enilnO'[::-1], 'Store', 'Store'], 'b': [1, 2, 3]})"
    )
    question = "What is the total of b for the Online channel?"
    replies = [
        f"{fence}python\n{setup}\nsel = t[t['ch'] == 'Online']\nprint(sel['c'].sum())\n{fence}",
        f"{fence}python\nprint(sel['b'].sum())\n{fence}",
        "<answer>1</answer>",
    ]
    worker = Worker(ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, question))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert "unused_value" not in problems and events[-1].answer == "1", problems
    # near miss: the value is only on the line that failed
    replies = [
        f"{fence}python\n{setup}\nprint(t[t['ch'] == 'Online']['c'].sum())\n{fence}",
        f"{fence}python\nprint(t['b'].sum())\n{fence}",
        "<answer>6</answer>",
        "<answer>6</answer>",
    ]
    worker = Worker(ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, question))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert "unused_value" in problems, problems


@pytest.mark.kernel
def test_a_cell_sent_again_is_answered_from_its_printed_value(tracked: TrackedSession) -> None:
    fence = "```"
    cell = (
        f"{fence}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\nt['b'].sum()\n{fence}"
    )
    model = ScriptedModel([cell, cell])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0)
    events = list(worker.run_turn(1, "What is the total of b, rounded to 2 decimals?"))
    assert events[-1].answer == "60.00" and len(model.requests) == 2
    # a cell that failed is not an answer, sent again or not
    bad = f"{fence}python\nt['nope'].sum()\n{fence}"
    model = ScriptedModel([bad, bad, "<answer>0</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0)
    steps = [e for e in worker.run_turn(1, "What is the total of b?") if isinstance(e, StepRecord)]
    assert [s.problem for s in steps][:2] == [None, "repeated_failure"]


@pytest.mark.kernel
def test_a_name_no_column_of_the_data_holds_is_held_back_once(tracked: TrackedSession) -> None:
    fence = "```"
    setup = "import pandas as pd\nt = pd.DataFrame({'region': ['North', 'South'], 'b': [1, 2]})"
    question = "Which region has the largest b? Answer as `region: <name>, b: <value>`."
    cell = f"{fence}python\n{setup}\nt.sort_values('b')\n{fence}"
    made_up = "<answer>region: North Partner, b: 2</answer>"
    model = ScriptedModel([cell, made_up, "<answer>region: South, b: 2</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    held = [e for e in events if isinstance(e, StepRecord) and e.problem == "unknown_name"]
    assert len(held) == 1 and "'North Partner' is no value" in held[0].observation
    assert events[-1].answer == "region: South, b: 2"
    # a name the data holds (case aside) goes straight to review; asked once only
    model = ScriptedModel([cell, "<answer>region: south, b: 2</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    assert events[-1].answer == "region: south, b: 2"
    model = ScriptedModel([cell, made_up, made_up])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    assert events[-1].answer == "region: North Partner, b: 2"


@pytest.mark.parametrize(
    ("answer", "held"),
    [
        ("orders: 1200, net_revenue: 209637.41", True),
        ("share: 51.24%", True),
        ("negative: 4", False),  # a small integer is the answer here: it must be printed
        ("negative: 3", False),
        ("Leeds", False),  # no number to hold
        ("orders: 1200, net_revenue: 1020.00", False),
    ],
)
def test_held_by_needs_every_number_printed(answer: str, held: bool) -> None:
    assert held_by(answer, SHOWN[:2]) is held
    assert held_by("negative: 4", ["Result:\n4"])


@pytest.mark.kernel
def test_an_answer_line_the_outputs_hold_is_the_answer_and_its_code_is_not_run(
    tracked: TrackedSession,
) -> None:
    fence = "```"
    question = "What is the total of b? Answer as `total: <sum>`."
    wander = "## 2. What is the mean of b?\n"  # a small model asks itself the next question
    replies = [
        f"answer: total: 1020\n{fence}python\nimport pandas as pd\n"
        f"t = pd.read_csv('data/t.csv')\nt['b'].sum()\n{fence}",
        f"**Answer:** total: 60\n\n{wander}{fence}python\nt['mean_b'] = t['b'].mean()\n{fence}",
    ]
    model = ScriptedModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, question))
    steps = [e for e in events if isinstance(e, StepRecord)]
    # the first answer line was never printed: its code runs; the second is held by the
    # printed 60: it is the answer, and the code after it is not run
    assert steps[0].execution is not None and steps[0].answer is None
    assert events[-1].answer == "total: 60" and len(model.requests) == 2
    assert steps[-1].code is None and steps[-1].execution is None
    probe = tracked.kernel.execute("print('mean_b' in t.columns)")
    assert probe.stdout.strip() == "False"
    # an answer line alone is an answer (after code ran), checked like any other
    model = ScriptedModel([*replies[:1], "Final answer: total: 61", "answer: total: 60"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(2, question))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert problems == [None, "ungrounded_answer", None] and events[-1].answer == "total: 60"


@pytest.mark.kernel
def test_a_column_the_context_names_and_no_cell_read_is_held_back_once(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\nt = pd.DataFrame({'units': [1, 2, 3], 'fee': [10, 20, 30]})",
        frames={"t": "data/t.csv"},
        columns={"t": ("units", "fee")},
    )
    context = "The gross of a row is its units times 2; its net is the gross minus its fee."
    question = "What is the total net?"
    left_out = f"{fence}python\nt['gross'] = t['units'] * 2\nprint(t['gross'].sum())\n{fence}"
    with_b = f"{fence}python\nt['net'] = t['gross'] - t['fee']\nprint(t['net'].sum())\n{fence}"
    later = f"{fence}python\nprint(t['net'].max())\n{fence}"
    model = ScriptedModel(
        [
            left_out,
            "<answer>12</answer>",
            with_b,
            "<answer>-48</answer>",
            later,
            "<answer>-8</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question, context=context))
    held = [e for e in events if isinstance(e, StepRecord) and e.problem == "unread_column"]
    assert len(held) == 1 and "`t['fee']`" in held[0].observation
    assert events[-1].answer == "-48"
    # a later turn reading a column made from b has read b (lineage ancestry): no doubt
    events = list(worker.run_turn(2, "What is the largest net, given the fee?"))
    assert not [e for e in events if isinstance(e, StepRecord) and e.problem]
    assert events[-1].answer == "-8"
    # asked once: the same answer again goes on, after the net the context defines and
    # the gross the cell sums are told apart once too (`test_worker_unbuilt_term`)
    model = ScriptedModel([left_out, *["<answer>12</answer>"] * 3])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question, context=context))
    problems = [e.problem for e in events if isinstance(e, StepRecord) and e.problem]
    assert problems == ["unread_column", "unbuilt_term"] and events[-1].answer == "12"


@pytest.mark.kernel
def test_columns_the_context_names_only_to_describe_the_table_are_not_held_back(
    tracked: TrackedSession,
) -> None:
    """A first turn's context says what each column of the table holds; the question
    counts rows of one state. The columns the description names and the count does not
    need are no terms the answer left out; a column the question names too still is."""
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "t = pd.DataFrame({'sold_on': ['2025-01-02'] * 3, 'stall_id': ['a', 'b', 'a'],\n"
        "    'trays': [1, 2, 3], 'tray_price': [4.0, 5.0, 6.0],\n"
        "    'sale_state': ['paid', 'refunded', 'paid']})",
        frames={"t": "data/t.csv"},
        columns={"t": ("sold_on", "stall_id", "trays", "tray_price", "sale_state")},
    )
    context = (
        "data/t.csv has one row per sale (sold_on is the day of the sale, stall_id the "
        "stall, trays the number of trays, tray_price the price of one tray; sale_state "
        "is paid, or refunded)."
    )
    count = f"{fence}python\nprint((t['sale_state'] == 'refunded').sum())\n{fence}"
    model = ScriptedModel([count, "<answer>1</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, "How many sales were refunded?", context=context))
    problems = [e.problem for e in events if isinstance(e, StepRecord) and e.problem]
    assert problems == [] and events[-1].answer == "1"
    # the question names the trays: a count that never read them is held back once
    model = ScriptedModel([count, "<answer>1</answer>", "<answer>1</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    question = "How many trays were sold in refunded sales?"
    events = list(worker.run_turn(1, question, context=context))
    (held,) = [e for e in events if isinstance(e, StepRecord) and e.problem == "unread_column"]
    assert "`t['trays']`" in held.observation and "tray_price" not in held.observation


@pytest.mark.kernel
def test_a_named_column_of_a_table_read_whole_is_read_in_every_table_that_holds_it(
    tracked: TrackedSession,
) -> None:
    """The context lists the shipments' columns (``sender_id`` among them); the cell reads
    the shipments whole (``.shape``): the register's ``sender_id`` is no unread column."""

    fence = "```"
    setup = _register_and_shipments()
    context = "data/ship.csv holds one row per shipment (sender_id the sender, kg its weight)."
    model = ScriptedModel([f"{fence}python\nship.shape\n{fence}", "<answer>3</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, "How many shipments are there?", context=context))
    problems = [e.problem for e in events if isinstance(e, StepRecord)]
    assert not [p for p in problems if p] and events[-1].answer == "3", problems


@pytest.mark.kernel
def test_an_answer_from_another_table_than_the_file_the_turn_names_is_held_back_once(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "courses = pd.DataFrame({'code': ['a', 'b', 'c']})\n"
        "enrolments = pd.DataFrame({'student': [1, 1, 2, 3, 3], 'code': list('abcab')})",
        frames={"courses": "data/courses.csv", "enrolments": "data/enrolments.csv"},
        columns={"courses": ("code",), "enrolments": ("student", "code")},
    )
    context = "data/enrolments.csv holds one row per student and course."
    question = "How many students are there?"
    wrong = f"{fence}python\nprint(len(courses))\n{fence}"
    right = f"{fence}python\nprint(enrolments['student'].nunique())\n{fence}"
    model = ScriptedModel([wrong, "<answer>3</answer>", right, "<answer>3</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question, context=context))
    held = [e for e in events if isinstance(e, StepRecord) and e.problem == "unread_file"]
    assert len(held) == 1, [e.problem for e in events if isinstance(e, StepRecord)]
    assert "data/enrolments.csv (loaded as `enrolments`)" in held[0].observation
    assert events[-1].answer == "3" and len(model.requests) == 4
    # near misses: the named table read (directly, or through a table made from it), a
    # turn that names no file, and the same answer again after the doubt
    for reply, ctx in ((right, context), (wrong, "")):
        model = ScriptedModel([reply, "<answer>3</answer>"])
        events = list(
            worker.__class__(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(
                2, question, context=ctx
            )
        )
        assert not [e for e in events if isinstance(e, StepRecord) and e.problem]
    model = ScriptedModel([wrong, "<answer>3</answer>", "<answer>3</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question, context=context))
    assert events[-1].answer == "3" and len(model.requests) == 3


@pytest.mark.kernel
def test_a_loaded_table_bound_to_a_number_is_told_with_its_file(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "courses = pd.DataFrame({'code': ['a', 'b', 'c']})\n"
        "enrolments = pd.DataFrame({'student': [1, 1, 2, 3, 3], 'code': list('abcab')})",
        frames={"courses": "data/courses.csv", "enrolments": "data/enrolments.csv"},
        columns={"courses": ("code",), "enrolments": ("student", "code")},
    )
    clobber = f"{fence}python\nenrolments = enrolments.shape[0]\nprint(enrolments)\n{fence}"
    keep = f"{fence}python\nn = enrolments.shape[0]\ncourses = courses.copy()\nprint(n)\n{fence}"
    model = ScriptedModel([clobber, keep, "<answer>5</answer>"])
    worker = Worker(
        model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup, retry_samples=0
    )
    steps = [
        e
        for e in worker.run_turn(1, "How many enrolments?")
        if isinstance(e, StepRecord) and e.code and "shape" in e.code
    ]
    assert "replaced the table `enrolments`, loaded from data/enrolments.csv, with int 5" in (
        steps[0].observation
    )
    # near miss: a table rebound to a table, and a new name for the number
    assert "replaced the table" not in steps[1].observation


@pytest.mark.parametrize(
    ("question", "answer", "unformed"),
    [
        ("Which month had the most? Answer as YYYY-MM.", "June 2024 had the most.", "month"),
        ("Which month had the most? Answer as YYYY-MM.", "2024-06", None),
        ("What is the mean of b, rounded to 2 decimals?", "There is no such row.", "number"),
        ("What is the mean of b, rounded to 2 decimals?", "20.00", None),
        ("How many rows are there?", "none of them", None),  # a count's form is not written
        ("Rank the regions by total revenue.", "North, South", None),
        ("Answer as `rows: <count>, total: <sum>`.", "rows: 3", None),  # a template's work
    ],
)
def test_an_answer_without_the_written_form(question: str, answer: str, unformed: str | None):
    from stateguard.worker.answer_format import AnswerSpec

    spec = AnswerSpec.from_question(question)
    found = spec.unformed(answer) if spec is not None else None
    assert (found.kind if found is not None else None) == unformed


@pytest.mark.kernel
def test_an_answer_without_the_asked_month_form_takes_the_printed_month(
    tracked: TrackedSession,
) -> None:
    fence = "```"
    question = "Which month had the largest b? Answer with the month as YYYY-MM."
    model = ScriptedModel(
        [
            f"{fence}python\nimport pandas as pd\nprint(pd.Period('2024-06', 'M'))\n{fence}",
            "<answer>June 2024 had the largest b.</answer>",
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    assert events[-1].answer == "2024-06"
    assert len(model.requests) == 2  # the printed month went in without another model call


@pytest.mark.kernel
def test_an_answer_without_the_asked_number_is_held_back_once(tracked: TrackedSession) -> None:
    fence = "```"
    question = "What is the mean of b for rows where a is 99, rounded to 2 decimals?"
    model = ScriptedModel(
        [
            f"{fence}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\n"
            f"print(t.shape)\n{fence}",
            "<answer>There are no such rows.</answer>",
            "<answer>There are no such rows.</answer>",  # asked once: now it goes to review
        ]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert [s.problem for s in steps] == [None, "unformed_answer", None]
    assert "rounded to 2 decimals" in steps[1].observation
    assert events[-1].answer == "There are no such rows."


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("context", "revised", "held"),
    [
        ("The fee was revised from 8 % to 10 % of the price.", "t['fee'] = t['p'] * 0.10", False),
        ("The fee was revised from 8 % to 10 % of the price.", "t['net'] = t['p'] * 0.9", False),
        (
            "The fee was revised from 8 % to 10 % of the price.",
            "t['fee'] = t['p'] * 10 / 100",
            False,
        ),
        ("The fee was revised from 180 to 195 per credit.", "t['fee'] = t['p'] * 195", False),
        ("The fee was revised from 8 % to 10 % of the price.", "t['fee'] = t['p'] * 0.08", True),
        ("The fee was revised from 180 to 195 per credit.", "t['fee'] = t['p'] * 180", True),
        ("No revision is stated here.", "t['fee'] = t['p'] * 0.08", False),  # near miss
    ],
)
def test_an_answer_of_a_revision_turn_without_the_new_value_is_held_back_once(
    tracked: TrackedSession, context: str, revised: str, held: bool
) -> None:
    fence = "```"
    cell = f"import pandas as pd\nt = pd.DataFrame({{'p': [12.5, 25.5]}})\n{revised}\nprint(7)"
    model = ScriptedModel(
        [f"{fence}python\n{cell}\n{fence}", "<answer>7</answer>", "<answer>7</answer>"]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(5, "What is the total fee now?", context=context))
    doubts = [e for e in events if isinstance(e, StepRecord) and e.problem == "unapplied_revision"]
    assert len(doubts) == int(held)
    if held:
        assert "from " in doubts[0].observation and "no code of this turn" in doubts[0].observation
    assert events[-1].answer == "7"  # asked once: the same answer again is submitted


FEE_MODEL = (
    "The platform keeps a commission of 12 % of a session's price; a cancelled session "
    "earns a flat fee of 3.00."
)


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("context", "code", "held"),
    [
        (FEE_MODEL, "t['c'] = t['p'] * 0.12\nfee = 3.00 * 2", False),
        (FEE_MODEL, "t['c'] = t['p'] * 12 / 100\nfee = 3 * 2", False),
        (FEE_MODEL, "t['net'] = t['p'] * 0.88\nfee = 3.0", False),  # the complement
        (FEE_MODEL, "t['c'] = t['p'] * 0.12", True),  # the flat fee left out
        (FEE_MODEL, "t['c'] = t['p']", True),  # the whole price taken
        # near misses: whole numbers and a revision's values are no parameters
        ("The 2025 file holds 1,700 sessions.", "t['c'] = t['p']", False),
        ("The fee was revised from 8 % to 10 % of the price.", "t['c'] = t['p'] * 0.1", False),
    ],
)
def test_an_answer_without_a_parameter_the_context_states_is_held_back_once(
    tracked: TrackedSession, context: str, code: str, held: bool
) -> None:
    fence = "```"
    cell = f"import pandas as pd\nt = pd.DataFrame({{'p': [12.5, 25.5]}})\n{code}\nprint(7)"
    model = ScriptedModel(
        [f"{fence}python\n{cell}\n{fence}", "<answer>7</answer>", "<answer>7</answer>"]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(2, "What are the total earnings?", context=context))
    doubts = [e for e in events if isinstance(e, StepRecord) and e.problem == "unused_parameter"]
    assert len(doubts) == int(held)
    if held:
        assert "the context states" in doubts[0].observation
    assert events[-1].answer == "7"  # asked once: the same answer again is submitted


@pytest.mark.kernel
def test_an_earlier_answer_recomputed_by_the_same_code_for_another_question_is_held_back(
    tracked: TrackedSession,
) -> None:
    fence = "```"
    share = f"{fence}python\nshare = round(100 * 3 / 7, 2)\nprint('share', share)\n{fence}"
    fee = f"{fence}python\nfee = round(0.1 * 5000, 2)\nprint(fee)\n{fence}"
    model = ScriptedModel(
        [
            share,
            "<answer>42.86</answer>",
            # turn 5 runs turn 4's code again, printed with a label (what it shows differs,
            # so it is not a replayed cell: the answer is what repeats turn 4's)
            f"{fence}python\nshare = round(100 * 3 / 7, 2)\nprint('share now', share)\n{fence}",
            "<answer>42.86</answer>",
            fee,
            "<answer>500.0</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    assert list(worker.run_turn(4, "What share, in %?"))[-1].answer == "42.86"
    events = list(worker.run_turn(5, "What is the total fee now?"))
    held = [e for e in events if isinstance(e, StepRecord) and e.problem == "recomputed_answer"]
    assert len(held) == 1 and "turn 4" in held[0].observation
    assert events[-1].answer == "500.0"
    # near miss: new code that gives the same value is an answer
    model = ScriptedModel(
        [
            f"{fence}python\nagain = round(300 / 7, 2)\nprint(again)\n{fence}",
            "<answer>42.86</answer>",
        ]
    )
    worker2 = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    worker2._answered = list(worker._answered)  # the earlier turns of the session
    events = list(worker2.run_turn(6, "What share of the other, in %?"))
    assert not [e for e in events if isinstance(e, StepRecord) and e.problem]
    assert events[-1].answer == "42.86"


@pytest.mark.parametrize(
    ("code", "numbers"),
    [
        ("1400", ["1400"]),
        ("print(1400)", ["1400"]),
        ("print('returned:', 1400, sep=' ')", ["1400"]),
        ("returned = 1400\nprint(f'returned: {returned}')", ["1400"]),
        ("(1900, -1400)", ["1900", "1400"]),
        ("{'shipments': 1900, 'returned': 1400}", ["1900", "1400"]),
        # computed, or read from the session: not written numbers
        ("rate = 0.15", []),  # assignments alone show nothing
        ("1900 - 181", []),
        ("len(df)", []),
        ("print(returned)", []),  # a name the cell did not bind
        ("df.shape[0]", []),
        ("x = 1400\nx * 2", []),
        ("import math\nmath.pi", []),
        ("round(2.345, 2)", []),
        ("print(f'{1400:.2f}')", []),  # a format spec is left alone
        ("print('no numbers here')", []),
        ("this is not python", []),
    ],
)
def test_literal_numbers(code: str, numbers: list[str]) -> None:
    assert literal_numbers(code) == numbers


@pytest.mark.kernel
def test_a_number_a_cell_only_wrote_does_not_ground_an_answer(tracked: TrackedSession) -> None:
    """The model writes its guess as a cell (``1400``) after the answer was refused as
    unseen: the cell is told it computes nothing, and the guess stays ungrounded."""
    fence = "```"
    model = ScriptedModel(
        [
            f"{fence}python\nimport pandas as pd\nlen(pd.read_csv('data/t.csv'))\n{fence}",
            "<answer>rows: 74</answer>",
            f"{fence}python\n74\n{fence}",
            "<answer>rows: 74</answer>",
            "<answer>rows: 3</answer>",
        ]
        + ["<answer>rows: 3</answer>"] * 3  # a reply repeated draws candidates
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "Rows?")
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    problems = [s.problem for s in steps]
    assert problems == [None, "ungrounded_answer", None, "ungrounded_answer", None], problems
    assert "computes nothing" in steps[2].observation
    assert events[-1].answer == "rows: 3"


@pytest.mark.kernel
def test_a_stated_parameter_echoed_is_no_written_guess(tracked: TrackedSession) -> None:
    fence = "```"
    model = ScriptedModel([f"{fence}python\nrate = 0.15\nrate\n{fence}", "<answer>15 %</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "What is the new rate?", "The rate is now 15 %."))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert "computes nothing" not in steps[0].observation
    assert events[-1].answer == "15 %"


@pytest.mark.kernel
def test_an_answer_that_only_repeats_a_named_value_does_not_use_it(
    tracked: TrackedSession,
) -> None:
    """The question names a value of another table's column ("Homeware"); the answer
    repeats the name, but no cell of the turn read that column: held back once. An answer
    picked from a grouping on that column uses it."""
    fence = "```"
    setup = (
        "import pandas as pd\n"
        "reg = pd.DataFrame({'sid': [1, 2, 3], 'sector': ['Home' + 'ware', 'Toys', 'Toys']})\n"
        "ship = pd.DataFrame({'sid': [1, 2, 3, 1], 'kg': [1.5, 2.5, 4.0, 2.0]})"
    )
    question = "What share of the weight comes from Homeware senders, in percent?"
    share = "ship[ship['sid'] == 2]['kg'].sum() / ship['kg'].sum() * 100"
    guessed = f"{fence}python\n{setup}\n{share}\n{fence}"
    replies = [guessed, "<answer>Homeware, 25.0</answer>", "<answer>Homeware, 25.0</answer>"]
    model = ScriptedModel(replies)
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    held = [s for s in steps if s.problem == "unused_value"]
    assert len(held) == 1 and "'Homeware' (a value of `reg['sector']`)" in held[0].observation
    # picked from a grouping on the column: the answer's name is a use of it
    grouped = (
        f"{fence}python\n{setup}\nm = ship.merge(reg, on='sid', how='left')\n"
        f"m.groupby('sector')['kg'].sum() / m['kg'].sum() * 100\n{fence}"
    )
    model = ScriptedModel([grouped, "<answer>Homeware: 35.0</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, question)
    )
    assert [s.problem for s in events if isinstance(s, StepRecord)] == [None, None]
    assert events[-1].answer == "Homeware: 35.0"


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        # a guess stated before any cell counted it is dropped; the shown number stays
        (
            "shipments: 1200, returned: 1400\nCount them.\n```python\nlen(t)\n```",
            "Count them.\n```python\nlen(t)\n```",
        ),
        ("The total is 1200.\n```python\nlen(t)\n```", None),  # shown: kept as it is
        ("Filter on 2 groups.\n```python\nlen(t)\n```", None),  # small integers pass
        ("<answer>1400</answer>", None),  # no code: an answer is checked on its own
        ("total: 1400\n", None),
    ],
)
def test_unclaimed_drops_thought_lines_of_numbers_never_shown(reply: str, kept: str | None) -> None:
    assert unclaimed(reply, SHOWN) == (reply if kept is None else kept)


def test_unclaimed_drops_thought_lines_copied_from_the_last_message() -> None:
    last = "Result:\n(181, 7): 181 rows, 7 columns\nThe cell created: t is DataFrame"
    reply = "The cell created: t is DataFrame\nNow sum it.\n```python\nt.sum()\n```"
    assert unclaimed(reply, SHOWN, last) == "Now sum it.\n```python\nt.sum()\n```"
    # a short line (``Result:``) may be the model's own words: kept
    short = "Result:\nNow sum it.\n```python\nt.sum()\n```"
    assert unclaimed(short, SHOWN, last) == short


@pytest.mark.kernel
def test_the_model_does_not_read_its_guess_again(tracked: TrackedSession) -> None:
    fence = "```"
    cell = f"{fence}python\nimport pandas as pd\nlen(pd.read_csv('data/t.csv'))\n{fence}"
    model = ScriptedModel([f"rows: 7400\n{cell}", "<answer>rows: 3</answer>"])
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "Rows?")
    )
    assert events[-1].answer == "rows: 3"
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert steps[0].thought == "rows: 7400"  # the record keeps what the model wrote
    second = "\n".join(m.content for m in model.requests[1].messages)
    assert "7400" not in second and "len(pd.read_csv('data/t.csv'))" in second


def _held(
    tracked: TrackedSession, replies: list[str], question: str, problem: str
) -> tuple[list, list[StepRecord]]:
    """One turn with no manager: its events, and the steps held back for ``problem``."""
    worker = Worker(ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, question))
    steps = [e for e in events if isinstance(e, StepRecord)]
    return events, [s for s in steps if s.problem == problem]


@pytest.mark.kernel
def test_several_numbers_for_the_one_number_asked_are_held_back_once(
    tracked: TrackedSession,
) -> None:
    """The size of a table (``t: 12 rows, 11 columns``) given for a share: held back once."""
    fence = "```"
    frame = "pd.DataFrame({c: range(12) for c in 'abcdefghijk'})"
    cell = f"{fence}python\nimport pandas as pd\nt = {frame}\nprint(*t.shape)\n{fence}"
    question = "What share of the rows is in 2025? Give the percentage rounded to 2 decimals."
    shape = "<answer>t: 12 rows, 11 columns</answer>"
    events, held = _held(tracked, [cell, shape, shape], question, "many_numbers")
    assert len(held) == 1, held
    assert "gives several (12, 11)" in held[0].observation
    assert events[-1].answer == "t: 12 rows, 11 columns"  # asked once: the same again goes on
    # near misses: one number; a number the question writes (its year) beside the value
    # a count read off "How many" may be one part of two: no doubt
    model = ScriptedModel([cell, "<answer>12 rows, 11 columns</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "How many rows are there, and how many columns?"))
    assert events[-1].answer == "12 rows, 11 columns"
    for answer in ("12", "2025: 12"):
        model = ScriptedModel([cell, f"<answer>{answer}</answer>"])
        worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
        events = list(worker.run_turn(1, question))
        assert not [e.problem for e in events if isinstance(e, StepRecord) and e.problem]
        assert events[-1].answer == answer


@pytest.mark.kernel
def test_a_table_merged_again_is_told_with_the_line_that_undoes_it(
    tracked: TrackedSession,
) -> None:

    fence = "```"
    setup = _register_and_shipments()
    merge = f"{fence}python\nship = ship.merge(reg, on='sender_id', how='left')\n{fence}"
    again = merge.replace("merge(reg,", "merge(reg[['sender_id', 'sector']],")
    model = ScriptedModel([merge, again, "<answer>none</answer>"] + ["<answer>x</answer>"] * 3)
    worker = Worker(
        model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup, retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "Which sector ships most?") if isinstance(e, StepRecord)]
    merges = [s for s in steps if s.code and "merge" in s.code]
    assert "already held" not in merges[0].observation  # the first merge adds the columns
    assert "`ship` already held 'sector'" in merges[1].observation
    assert "ship = ship.drop(columns=['sector_y']).rename(columns={'sector_x': 'sector'})" in (
        merges[1].observation
    )


@pytest.mark.kernel
def test_one_value_in_every_part_of_a_breakdown_is_held_back_once(
    tracked: TrackedSession,
) -> None:
    """``a: 5.00, b: 5.00, c: 5.00`` for three parts: held back once, then let through."""
    fence = "```"
    frame = "pd.DataFrame({'k': list('abc') * 4, 'v': [float(i) for i in range(12)]})"
    cell = (
        f"{fence}python\nimport pandas as pd\nt = {frame}\n"
        f"print(t['v'].mean())\nprint(t.groupby('k')['v'].sum().tolist())\n{fence}"
    )
    question = "Summarize the total v by k. Answer as `a: <total>, b: <total>, c: <total>`."
    same = "<answer>a: 5.50, b: 5.50, c: 5.50</answer>"
    events, held = _held(tracked, [cell, same, same], question, "repeated_value")
    assert len(held) == 1, held
    assert "it gives 5.50 for every one of `a`, `b`, `c`" in held[0].observation
    assert events[-1].answer == "a: 5.50, b: 5.50, c: 5.50"  # asked once
    # near misses: the parts differ; two parts alike (a form of two fields)
    for answer, form in (
        ("a: 18.00, b: 22.00, c: 26.00", question),
        ("mean: 5.50, median: 5.50", "Answer as `mean: <value>, median: <value>`."),
    ):
        _, held = _held(tracked, [cell, f"<answer>{answer}</answer>"], form, "repeated_value")
        assert held == [], held


@pytest.mark.kernel
def test_an_unread_column_the_form_asks_a_name_of_is_told_with_its_grouping(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "d = pd.DataFrame({'depot': ['Leeds', 'York', 'Leeds'], 'profit': [5.0, 7.0, 4.0]})",
        frames={"d": "data/d.csv"},
        columns={"d": ("depot", "profit")},
    )
    question = (
        "Which depot has the highest total profit? Answer as `depot: <name>, profit: <total>`."
    )
    grouped = f"{fence}python\nprint(d.groupby('depot')['profit'].sum())\n{fence}"
    model = ScriptedModel(
        [
            f"{fence}python\nprint(d['profit'].max())\n{fence}",
            "<answer>depot: York, profit: 7.0</answer>",
            grouped,
            "<answer>depot: Leeds, profit: 9.0</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    (held,) = [e for e in events if isinstance(e, StepRecord) and e.problem == "unread_column"]
    assert "for example `d.groupby('depot')['profit'].sum()`" in held.observation
    assert events[-1].answer == "depot: Leeds, profit: 9.0"
    # near miss: a form that asks no name of the unread column gets no grouping
    model = ScriptedModel(
        [f"{fence}python\nprint(d['profit'].max())\n{fence}", *["<answer>7.0</answer>"] * 2]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, "What is the highest profit of any depot?"))
    held = [e for e in events if isinstance(e, StepRecord) and e.problem == "unread_column"]
    assert held and "groupby" not in held[0].observation


@pytest.mark.kernel
def test_values_the_question_names_applied_one_at_a_time_are_held_back_once(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "d = pd.DataFrame({'depot': ['Leeds', 'Glasgow', 'Glasgow', 'Glasgow'],\n"
        "                  'segment': ['Retail', 'Retail', 'Wholesale', 'Wholesale'],\n"
        "                  'parcels': [1, 2, 5, 7]})",
        frames={"d": "data/d.csv"},
        columns={"d": ("depot", "segment", "parcels")},
    )
    question = (
        "What is the average number of parcels of Wholesale shipments from the Glasgow depot?"
    )
    cell = f"{fence}python\nprint(d[d['segment'] == 'Wholesale']['parcels'].mean())\n{fence}"
    glasgow = f"{fence}python\nprint(d[d['depot'] == 'Glasgow']['parcels'].mean())\n{fence}"
    both = (
        f"{fence}python\n"
        "print(d[(d['depot'] == 'Glasgow') & (d['segment'] == 'Wholesale')]['parcels'].mean())\n"
        f"{fence}"
    )
    model = ScriptedModel([cell, glasgow, "<answer>4.67</answer>", both, "<answer>6.0</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    (held,) = [e for e in events if isinstance(e, StepRecord) and e.problem == "parted_values"]
    assert "selects by 'Glasgow' (`d['depot']`) only" in held.observation, held.observation
    assert "`d[(d['depot'] == 'Glasgow') & (d['segment'] == 'Wholesale')]`" in held.observation
    assert events[-1].answer == "6.0"
    # near miss: one cell selecting by both goes straight through
    model = ScriptedModel([both, "<answer>6.0</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    assert not [e for e in events if isinstance(e, StepRecord) and e.problem]
    assert events[-1].answer == "6.0"


@pytest.mark.kernel
def test_two_values_of_one_column_are_groups_not_filters_applied_one_at_a_time(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "s = pd.DataFrame({'status': ['completed', 'cancelled', 'completed'],\n"
        "                  'fee': [10.0, 3.0, 20.0]})\n"
        "gone = s[s['status'] == 'cancelled']",
        frames={"s": "data/s.csv"},
        columns={"s": ("status", "fee")},
    )
    question = "What do the completed and the cancelled sessions earn together?"
    cell = (
        f"{fence}python\ndone = s[s['status'] == 'completed']\n"
        f"print(done['fee'].sum() + gone['fee'].sum())\n{fence}"
    )
    model = ScriptedModel([cell, "<answer>33.0</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    assert not [e for e in events if isinstance(e, StepRecord) and e.problem == "parted_values"]
    assert events[-1].answer == "33.0"


@pytest.mark.kernel
def test_the_printed_value_put_for_a_crowded_answer_still_hears_what_the_code_left_out(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.preload import Preload

    fence = "```"
    setup = Preload(
        code="import pandas as pd\n"
        "s = pd.DataFrame({'tid': ['a', 'b', 'c'], 'hours': [1.0, 2.0, 5.0]})\n"
        "t = pd.DataFrame({'tid': ['a', 'b'], 'city': ['Ba' + 'th', 'Leeds']})",  # as if read
        frames={"s": "data/s.csv", "t": "data/t.csv"},
        columns={"s": ("tid", "hours"), "t": ("tid", "city")},
    )
    question = (
        "What share of the hours was taught by tutors in Bath? "
        "Give the percentage rounded to 2 decimals."
    )
    cell = f"{fence}python\nprint(round(s[s['tid'] == 'b']['hours'].sum() / 8 * 100, 2))\n{fence}"
    model = ScriptedModel([cell, *["<answer>city: Bath, share: 25.0</answer>"] * 3])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), setup=setup)
    events = list(worker.run_turn(1, question))
    problems = [e.problem for e in events if isinstance(e, StepRecord) and e.problem]
    assert problems == ["unused_value"], problems  # asked once: then the answer goes on
    assert "25.0" in (events[-1].answer or "")


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("printed", "question", "held"),
    [
        ("76861.0", "What share of the hours was taught in Bath? Give the percentage.", True),
        ("-3.5", "What share of the orders were late? Round it to 2 decimals.", True),
        ("21.49", "What share of the hours was taught in Bath? Give the percentage.", False),
        ("0.2149", "What share of the orders were late? Round it to 4 decimals.", False),
        ("76861.0", "What are the total hours taught in Bath?", False),  # no share asked
        ("150.0", "By what percentage did revenue grow?", False),  # a change, not a share
    ],
)
def test_a_share_outside_zero_to_a_hundred_is_held_back_once(
    tracked: TrackedSession, printed: str, question: str, held: bool
) -> None:
    cell = f"import math\nprint(math.fsum([{printed} / 2, {printed} / 2]))"  # computed
    steps = answer_after_one_cell(tracked, cell, printed, question)
    doubts = [s for s in steps if s.problem == "impossible_share"]
    assert len(doubts) == int(held)
    if held:
        assert f"{printed} is more than the whole or less than nothing" in doubts[0].observation


SILENT_TOTAL = (
    "import pandas as pd\nt = pd.read_csv('data/t.csv')\ntotal = round(t['b'].sum() * 0.09, 2)"
)
"""A cell that prints nothing and creates one number (9 % of 60: 5.4)."""


@pytest.mark.kernel
def test_a_value_a_silent_cell_showed_as_created_grounds_the_answer(
    tracked: TrackedSession,
) -> None:
    """A cell that prints nothing is shown what it created ("total is float64 5.4"): an
    answer with that value rests on what the model was shown, and is not refused."""
    cell = SILENT_TOTAL
    steps = answer_after_one_cell(tracked, cell, "5.4", "What is 9 % of the total of b?")
    assert "total is float64 5.4" in steps[0].observation
    assert "ungrounded_answer" not in [s.problem for s in steps]


@pytest.mark.kernel
def test_a_number_a_silent_cell_did_not_show_is_still_refused(tracked: TrackedSession) -> None:
    """Only what the created note shows grounds an answer; another number is still refused."""
    fence = "```"
    cell = SILENT_TOTAL
    model = ScriptedModel(
        [f"{fence}python\n{cell}\n{fence}", "<answer>7.25</answer>", "<answer>5.4</answer>"]
    )
    events = list(
        Worker(model, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "9 % of b?")
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert [s.problem for s in steps] == [None, "ungrounded_answer", None]
    assert events[-1].answer == "5.4"
