"""A column defined again from fewer of its columns (`stateguard.lineage.narrowing`),
on a real tracked kernel."""

from __future__ import annotations

import pytest

from stateguard.lineage import TrackedSession
from stateguard.lineage.narrowing import narrowed_columns

pytestmark = pytest.mark.kernel

SETUP = (
    "import pandas as pd\n"
    "s = pd.DataFrame({'w': [1.0, 2.0], 'r': [2.0, 3.0], 'fee': [3.0, 1.0], 'cost': [4.0, 1.0]})"
)
DEFINED = (
    "s['base'] = s['w'] * s['r']\n"
    "s['billed'] = s['base'] * 1.09 + s['fee']\n"
    "s['gp'] = s['billed'] - s['cost']"
)


def narrowed(ts: TrackedSession, *cells: str) -> list[tuple[str, tuple[str, ...]]]:
    """Run ``cells`` after the setup and the definition; what the last one narrowed,
    against versions written before it."""
    if not ts.kernel.is_alive():
        ts.restart()
    ts.reset()
    for code in (SETUP, DEFINED, *cells):
        result = ts.execute(code)
        assert result.execution.ok and result.cell is not None, code
    last = ts.graph.cells[-1]
    found = narrowed_columns(ts.graph, last.created, before_cell=last.cell)
    return [(n.column, n.dropped) for n in found]


def test_a_column_defined_again_without_some_of_its_terms_is_narrowed(
    tracked: TrackedSession,
) -> None:
    got = narrowed(tracked, "s['gp'] = s['w'] * s['r'] - s['cost']")
    assert got == [("s['gp']", ("s['fee']",))]


@pytest.mark.parametrize(
    "cell",
    [
        # recomputed after a revision: the same columns, another constant
        "s['billed'] = s['base'] * 1.04 + s['fee']\ns['gp'] = s['billed'] - s['cost']",
        "s['gp'] = s['billed'] - s['cost']",  # the same definition again
        "s['gp'] = s['w'] * s['r'] * 1.04 + s['fee'] - s['cost']",  # written out in full
        "s['margin'] = s['w'] - s['cost']",  # a new column
        "t = s.copy()\nt['gp'] = t['w'] - t['cost']",  # another table's column
    ],
)
def test_a_column_recomputed_from_the_same_columns_is_not_narrowed(
    tracked: TrackedSession, cell: str
) -> None:
    assert narrowed(tracked, cell) == []
