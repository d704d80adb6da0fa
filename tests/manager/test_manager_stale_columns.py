"""A stale column riding along in a table read as a whole is not a stale use of the step,
unless the step names it (or takes it out of a subset of the table)."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession
from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel

SETUP = (
    "import pandas as pd\n"
    "t = pd.DataFrame({'r': [1.0, 2.0, 3.0], 'd': [0.1, 0.2, 0.3], 'k': ['a', 'b', 'a']})\n"
    "rate = 0.5\n"
    "t['cost'] = t['r'] * rate\n"
    "t['margin'] = t['r'] - t['cost']\n"
)


def _checked(code: str) -> tuple[bool, str]:
    """Set up, rewrite `cost` without recomputing `margin`, then review one reading cell."""
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        g.begin_turn("Set up.")
        g.run_cell(SETUP + "print(1)")
        assert g.propose_answer("1").accepted
        g.begin_turn("Rewrite the cost.")
        g.run_cell("t['cost'] = t['r'] * 0.6\nprint(2)")
        assert g.propose_answer("2").accepted
        g.begin_turn("The figure?")
        g.run_cell(code)
        review = g.propose_answer("0.2")
        return review.accepted, "\n".join(n.text for n in review.notes)


@pytest.mark.parametrize(
    "code",
    [
        "print(t[t['k'] == 'a']['d'].mean())",  # the table as a whole, then another column
        "sub = t[t['k'] == 'b']\nprint(sub['d'].mean())",  # a subset's other column
        "print(t.groupby('k')['d'].mean().max())",
    ],
)
def test_reading_the_table_for_another_column_is_not_a_stale_use(code: str) -> None:
    accepted, notes = _checked(code)
    assert accepted, notes


@pytest.mark.parametrize(
    "code",
    [
        "print(t['margin'].sum())",  # the stale column itself
        "print(t.groupby('k')['margin'].sum().max())",  # named in the grouped read
        "sub = t[t['k'] == 'b']\nprint(sub['margin'].sum())",  # out of a subset
    ],
)
def test_reading_the_stale_column_is_still_a_stale_use(code: str) -> None:
    accepted, notes = _checked(code)
    assert not accepted and "cost" in notes
