"""An answer read off one row of a Series where the question asks for one number."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest
from worker_helpers import answer_after_one_cell

from stateguard.audit.printchecks import labelled_series, shown_series
from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker import loop
from stateguard.worker.events import StepRecord
from stateguard.worker.loop import Worker
from stateguard.worker.summary import REFUSED, TurnTally

F = "```"


def test_a_named_long_series_is_read_with_its_length() -> None:
    s = pd.Series(range(1297), name="rental_days", dtype="float64") * 1.5
    shown = shown_series(repr(s))
    assert shown is not None and shown.length == 1297
    assert shown.rows[:2] == (("0", "0.0"), ("1", "1.5"))
    # pandas writes the name before the length: the labelled form reads the length too
    assert [f.length for f in labelled_series(f"total: {s}\n")] == [1297]


def test_a_grouped_series_is_read_without_its_index_name() -> None:
    frame = pd.DataFrame({"area": ["Coastal", "Lakes", "Metro"], "net": [1.5, 2.25, 3.0]})
    shown = shown_series(repr(frame.groupby("area")["net"].sum()))
    assert shown is not None
    assert shown.rows == (("Coastal", "1.50"), ("Lakes", "2.25"), ("Metro", "3.00"))


@pytest.mark.parametrize(
    "text",
    [
        "476413.0",  # a scalar
        repr(pd.DataFrame({"a": [1, 2], "b": [3, 4]})),  # a table
        "The rows, one by one:\n\n" + repr(pd.Series([1.0, 2.0])),  # text before the Series
        "dtype: float64",
    ],
)
def test_what_is_not_one_series_is_not_read_as_one(text: str) -> None:
    assert shown_series(text) is None


SETUP = (
    "import pandas as pd\n"
    "r = pd.DataFrame({'area': ['Coastal', 'Lakes', 'Metro', 'Lakes'],\n"
    "                  'days': [5, 3, 2, 4], 'rate': [30.5, 42.25, 50.0, 20.0]})\n"
)


def _play(tracked: TrackedSession, cell: str, answer: str, question: str) -> list[StepRecord]:
    return answer_after_one_cell(tracked, SETUP + cell, answer, question, turn=2)


@pytest.mark.kernel
def test_one_row_of_a_per_row_series_given_for_a_total_is_held_back_once(
    tracked: TrackedSession,
) -> None:
    # `.sum()` binds to the last factor: the result is a Series, its first row the answer
    steps = _play(
        tracked,
        "r['days'] * r['rate'].sum()",
        "713.75",
        "What is the total billed amount, rounded to 2 decimals?",
    )
    held = [s for s in steps if s.problem == "element_answer"]
    assert len(held) == 1
    assert "one row (`0`) of a Series of 4 values" in held[0].observation
    tally = TurnTally.of(steps)
    assert tally.invalid == 0 and tally.proposed == 2  # a held-back answer, not a malformed reply


@pytest.mark.kernel
def test_a_row_label_is_named_only_as_a_whole_number(tracked: TrackedSession) -> None:
    """Row ``0`` of a RangeIndex is not named by a context that writes ``0.90``."""
    steps = answer_after_one_cell(
        tracked,
        SETUP + "r['days'] * 0.90 + r['rate'] * 0.02",
        "5.11",
        "What is the total charged, rounded to 2 decimals?",
        turn=2,
        context="Each day is charged 0.90, plus 2 % of the rate.",
    )
    held = [s for s in steps if s.problem == "element_answer"]
    assert len(held) == 1, [s.problem for s in steps]
    assert "one row (`0`)" in held[0].observation


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "answer", "question"),
    [
        # the row the question names
        (
            "r.groupby('area')['rate'].sum()",
            "62.25",
            "What is the total rate of the Lakes area, rounded to 2 decimals?",
        ),
        # an extreme is read off a Series, not reduced from it
        (
            "r.groupby('area')['rate'].sum().sort_values()",
            "62.25",
            "Which area has the highest total rate? Give that total.",
        ),
        # the statistic's own row of describe()
        ("r['rate'].describe()", "35.69", "What is the average rate, rounded to 2 decimals?"),
        # one number broadcast to every row: that number is the answer
        (
            "r['days'] * 0 + r['rate'].sum()",
            "142.75",
            "What is the total rate, rounded to 2 decimals?",
        ),
        # the reduction itself
        ("(r['days'] * r['rate']).sum()", "459.25", "What is the total billed amount?"),
        # an answer that is no row of the Series shown (the total printed beside it)
        (
            "print((r['days'] * r['rate']).sum())\nr['days'] * r['rate']",
            "459.25",
            "What is the total billed amount?",
        ),
    ],
)
def test_near_misses_are_not_held_back(
    tracked: TrackedSession, cell: str, answer: str, question: str
) -> None:
    steps = _play(tracked, cell, answer, question)
    assert [s.problem for s in steps if s.problem] == []


def test_every_answer_the_loop_holds_back_is_counted_as_refused_not_malformed() -> None:
    tree = ast.parse(Path(loop.__file__).read_text())
    held = {
        arg.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("_invalid_step", "_printed_or_refused")
        for arg in node.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }
    # the doubts about the turn's code return ``(problem, note)`` for those two to tell
    held |= {
        node.value.elts[0].value
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef) and fn.name.endswith("_doubt")
        for node in ast.walk(fn)
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Tuple)
        and isinstance(node.value.elts[0], ast.Constant)
    }
    assert {"element_answer", "unapplied_revision", "unused_value", "unused_parameter"} <= held
    assert held - REFUSED == set()


TICKETS = (
    "import pandas as pd\n"
    "tickets = pd.DataFrame({'buyer_id': ['B1', 'B1', 'B2', 'B3', 'B3'],\n"
    "                        'net': [200.0, 150.0, 330.0, 100.0, 90.0]})"
)
COUNT = "How many buyers have tickets whose total net is above 320?"


def _tickets(tracked: TrackedSession, cell: str, answer: str, question: str) -> list[StepRecord]:
    from stateguard.worker.preload import Preload

    setup = Preload(
        code=TICKETS,
        frames={"tickets": "data/tickets.csv"},
        columns={"tickets": ("buyer_id", "net")},
    )
    return answer_after_one_cell(tracked, cell, answer, question, setup=setup)


@pytest.mark.kernel
def test_rows_compared_where_the_question_counts_totals_are_held_back_once(
    tracked: TrackedSession,
) -> None:
    steps = _tickets(tracked, "print(tickets[tickets['net'] > 320].shape[0])", "1", COUNT)
    held = [s for s in steps if s.problem == "rows_for_totals"]
    assert len(held) == 1
    note = held[0].observation
    assert "each buyer's total with 320" in note and "`tickets['net'] > 320`" in note
    assert "tickets.groupby('buyer_id')['net'].sum()" in note and "(totals > 320)" in note


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "answer", "question"),
    [
        # the totals are made: grouping
        (
            "totals = tickets.groupby('buyer_id')['net'].sum()\nprint(int((totals > 320).sum()))",
            "2",
            COUNT,
        ),
        # the question has no total of each
        ("print(tickets[tickets['net'] > 320].shape[0])", "1", "How many tickets are above 320?"),
        # a comparison with another number
        ("print(tickets[tickets['net'] > 100].shape[0])", "3", COUNT),
    ],
)
def test_near_misses_of_rows_for_totals_are_not_held_back(
    tracked: TrackedSession, cell: str, answer: str, question: str
) -> None:
    steps = _tickets(tracked, cell, answer, question)
    assert [s.problem for s in steps if s.problem] == []


FORM = "How many rows, and what is the total charge? Answer as `rows: <count>, charge: <total>`."

ROWS = (
    "import pandas as pd\n"
    "s = pd.DataFrame({'area': ['Coastal', 'Lakes', 'Metro'] * 4,\n"
    "                  'kg': [float(i % 5 + 1) for i in range(12)],\n"
    "                  'value': [10.0 * (i + 1) for i in range(12)]})\n"
)


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "question", "told"),
    [
        # `.sum()` binds to its term: one value per row is printed for the total asked
        (
            "total = s['kg'].sum() * 0.90 + s['value'] * 0.02\nprint(total)",
            "What is the total charged, rounded to 2 decimals?",
            True,
        ),
        ("s['kg'] * 0.90 + s['value'] * 0.02", "What is the average charge?", True),
        # near misses: the reduction itself; a grouping; no reduction asked; few rows
        ("(s['kg'] * 0.90 + s['value'] * 0.02).sum()", "What is the total charged?", False),
        ("s.groupby('area')['kg'].sum()", "What is the total charged?", False),
        ("s['kg'] * 0.90 + s['value'] * 0.02", "Which shipment has the highest charge?", False),
        ("(s['kg'] * 0.90).head(5)", "What is the total charged?", False),
        # a form of labelled single values: told when the Series is all the cell showed
        ("s['kg'] * s['value'].sum()", FORM, True),
        ("print(len(s))\ns['kg'] * s['value'].sum()", FORM, False),
        ("(s['kg'] * s['value']).sum()", FORM, False),
        ("s.groupby('area')['kg'].sum()", FORM, False),
        ("s['kg'] * s['value'].sum()", "Answer as `area: <name>, zone: <name>`.", False),
    ],
)
def test_a_per_row_series_shown_for_one_number_is_told(
    tracked: TrackedSession, cell: str, question: str, told: bool
) -> None:
    fence = "```"
    model = ScriptedModel([f"{fence}python\n{ROWS}{cell}\n{fence}"] + ["<answer>none</answer>"] * 9)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    steps = [e for e in worker.run_turn(2, question) if isinstance(e, StepRecord)]
    note = "a Series of 12 values, one per row"
    assert (note in steps[0].observation) is told, steps[0].observation
    if told and question == FORM:
        assert "asks for single values (`rows`, `charge`)" in steps[0].observation
    # the note writes the cell's own formula with its reduction over the whole of it
    rewrites = {
        "s['value'].sum()": "(s['kg'] * s['value']).sum()",
        "s['kg'].sum() * 0.90": "(s['kg'] * 0.9 + s['value'] * 0.02).sum()",
    }
    wanted = [r for w, r in rewrites.items() if told and w in cell]
    shown = steps[0].observation
    told_rewrites = [r for r in rewrites.values() if f"that formula is `{r}`" in shown]
    assert told_rewrites == wanted, steps[0].observation
