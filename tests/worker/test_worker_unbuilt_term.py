"""A quantity the task defines, asked for and answered with a column named for another."""

from __future__ import annotations

import pytest
from worker_helpers import answer_after_one_cell

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.events import StepRecord
from stateguard.worker.loop import Worker
from stateguard.worker.preload import Preload
from stateguard.worker.terms import reduced_columns

F = "```"
ORDERS = (
    "import pandas as pd\n"
    "orders = pd.DataFrame({'cuisine': ['Pizza', 'Curry', 'Pizza'],\n"
    "                       'basket_value': [20.0, 30.0, 10.0],\n"
    "                       'status': ['delivered', 'delivered', 'refunded']})\n"
)
CONTEXT = (
    "Money model: on a delivered order the platform earns a commission of 15 % of the "
    "basket_value. The restaurant's payout of a delivered order is its basket_value minus "
    "the commission. A refunded order pays out nothing (its payout is 0)."
)
QUESTION = "What is the total payout of Pizza orders, rounded to 2 decimals?"


@pytest.mark.parametrize(
    ("code", "columns"),
    [
        ("orders.groupby('cuisine')['basket_value'].sum().round(2)", ["basket_value"]),
        ("orders[orders['cuisine'] == 'Pizza']['basket_value'].mean()", ["basket_value"]),
        ("x = 1\norders[['a', 'b']].agg('sum')", ["a", "b"]),
        (
            "print(round(orders.groupby('cuisine')['basket_value'].sum().idxmax(), 2))",
            ["basket_value"],
        ),
        (
            "t = orders['basket_value'].sum(), orders['cuisine'].nunique()",
            ["basket_value", "cuisine"],
        ),
        ("orders['basket_value'].sum() * 0.15", []),  # computed from a reduction
        ("orders.basket_value.sum()", ["basket_value"]),  # an attribute that is a column
        ("orders['cuisine'].str.len().sum()", []),  # an attribute that is no column
        ("(orders['basket_value'] * 0.85).sum()", []),  # computed inline: nothing selected
        ("orders['basket_value'].sum()\nprint('done')", []),  # the last statement reduces none
        ("orders[", []),
    ],
)
def test_the_columns_a_cell_selects_and_then_reduces(code: str, columns: list[str]) -> None:
    assert reduced_columns(code, ["cuisine", "basket_value"]) == columns


def _play(
    tracked: TrackedSession, cell: str, answer: str, question: str = QUESTION
) -> list[StepRecord]:
    setup = Preload(
        code=ORDERS,
        frames={"orders": "data/orders.csv"},
        columns={"orders": ("cuisine", "basket_value", "status")},
    )
    return answer_after_one_cell(tracked, cell, answer, question, context=CONTEXT, setup=setup)


@pytest.mark.kernel
def test_a_defined_quantity_answered_with_another_column_is_held_back_once(
    tracked: TrackedSession,
) -> None:
    cell = "print(orders[orders['cuisine'] == 'Pizza']['basket_value'].sum())"
    steps = _play(tracked, cell, "30.0")
    held = [s for s in steps if s.problem == "unbuilt_term"]
    assert len(held) == 1
    note = held[0].observation
    assert "asks for the payout" in note and "reduces `basket_value`" in note
    assert "\u201cThe restaurant's payout of a delivered order is its basket_value" in note
    assert "pays out nothing (its payout is 0)" in note and "`orders['payout']`" in note


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "answer", "question"),
    [
        # the quantity is built under its name, then reduced
        (
            "orders['payout'] = (orders['basket_value'] * 0.85).where("
            "orders['status'] == 'delivered', 0)\n"
            "print(orders[orders['cuisine'] == 'Pizza']['payout'].sum())",
            "17.0",
            QUESTION,
        ),
        # computed inline: no column is selected and reduced
        (
            "d = orders[(orders['cuisine'] == 'Pizza') & (orders['status'] == 'delivered')]\n"
            "print(round((d['basket_value'] * 0.85).sum(), 2))",
            "17.0",
            QUESTION,
        ),
        # the question asks for no defined quantity (the commission is only "under")
        (
            "print(orders[orders['cuisine'] == 'Pizza']['basket_value'].sum())",
            "30.0",
            "What is the total basket_value of Pizza orders under the current commission?",
        ),
    ],
)
def test_near_misses_of_an_unbuilt_term_are_not_held_back(
    tracked: TrackedSession, cell: str, answer: str, question: str
) -> None:
    steps = _play(tracked, cell, answer, question)
    # (the third leaves the stated 15 % unused, a doubt of its own: `unused_parameter`)
    assert [s.problem for s in steps if s.problem == "unbuilt_term"] == []


@pytest.mark.kernel
def test_a_plural_quantity_the_task_defines_answered_with_another_column_is_held_back(
    tracked: TrackedSession,
) -> None:
    """ "The platform's receipts are its commissions and its refund charges together": a
    plural term with an amount is defined as a singular one is."""
    context = (
        "On a delivered order the platform earns a commission of 15 % of the basket_value; "
        "on a refunded order it charges a flat refund fee of 1.50. The platform's receipts "
        "are its commissions and its refund fees together."
    )
    setup = Preload(
        code=ORDERS,
        frames={"orders": "data/orders.csv"},
        columns={"orders": ("cuisine", "basket_value", "status")},
    )
    cell = "print(orders.groupby('cuisine')['basket_value'].sum().max())"
    steps = answer_after_one_cell(
        tracked,
        cell,
        "30.0",
        "Which cuisine brings the platform the largest receipts?",
        context=context,
        setup=setup,
    )
    held = [s for s in steps if s.problem == "unbuilt_term"]
    assert len(held) == 1, [s.problem for s in steps]
    assert "asks for the receipts" in held[0].observation, held[0].observation


class _Turns:
    """A model whose replies are scripted per turn: the test sets ``turn`` before each
    turn; a turn's last reply (its answer) repeats once its list runs out."""

    def __init__(self, script: dict[int, list[str]]) -> None:
        self.script = script
        self.turn = 0
        self.used: dict[int, int] = {}

    def __call__(self, messages: object) -> str:
        replies = self.script[self.turn]
        i = self.used.get(self.turn, 0)
        self.used[self.turn] = i + 1
        return replies[min(i, len(replies) - 1)]


RECEIPTS = (
    "On a paid sale the market earns a commission of 6 % of the price. A returned sale "
    "earns it a flat return fee of 1.20 instead. The market's receipts are its commissions "
    "and its return fees together."
)
SALES = (
    "import numpy as np\nimport pandas as pd\n"
    "s = pd.DataFrame({'kind': ['a', 'b', 'b'], 'price': [50.0, 10.0, 30.0],"
    " 'status': ['paid', 'paid', 'returned']})\n"
    "print(len(s))"
)
BUILT = (
    "s['receipts'] = np.where(s['status'] == 'paid', s['price'] * 0.08, 1.20)\n"
    "print(round(s['receipts'].sum(), 2))"
)


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "doubted"),
    [
        # the receipts taken as the prices: neither the revised 8 % nor the 1.20 is used
        ("t = s.groupby('kind')['price'].sum()\nprint(t.idxmax())", True),
        # near miss: the column built at turn 2 with both, read again
        ("t = s.groupby('kind')['receipts'].sum()\nprint(t.idxmax())", False),
    ],
)
def test_a_defined_quantity_asked_without_the_parameters_it_rests_on_is_held_back_once(
    tracked: TrackedSession, cell: str, doubted: bool
) -> None:
    """Turn 1 defines the receipts from a commission and a flat fee, turn 2 revises the
    commission, turn 3 asks for the receipts: code that uses neither the revised
    commission nor the fee, in the turn or in what it read, is held back once."""
    fence = "```python\n{}\n```"
    script = _Turns(
        {
            1: [fence.format(SALES), "<answer>3</answer>"],
            2: [fence.format(BUILT), "<answer>5.2</answer>"],
            3: [fence.format(cell), "<answer>a</answer>"],
        }
    )
    worker = Worker(
        ScriptedModel(script), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    script.turn = 1
    list(worker.run_turn(1, "How many sales are there?", RECEIPTS))
    script.turn = 2
    revised = "The commission has been revised from 6 % to 8 % of the price."
    list(worker.run_turn(2, "What are the receipts in total now?", revised))
    script.turn = 3
    events = list(worker.run_turn(3, "Which kind brings the market the largest receipts?"))
    held = [e for e in events if isinstance(e, StepRecord) and e.problem == "unused_term_parameter"]
    assert events[-1].answer == "a"
    if not doubted:
        assert held == []
        return
    assert len(held) == 1
    note = held[0].observation
    assert "asks for the receipts" in note, note
    assert "8 % (the commission, revised from 6 % to 8 %)" in note, note
    assert "1.20 (the flat return fee)" in note, note
    assert (
        "\u201cThe market's receipts are its commissions and its return fees together.\u201d"
        in note
    )
