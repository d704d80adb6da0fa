"""A rebinding to the same value is no new value (`LineageGraph.by_value`): re-reading a
file, recomputing a grouping, re-typing a list leave what was derived from the old object
fresh; a re-read that drops a column added since changes that column only; the shared
cases' rule (every rebinding versions the name) stays available with ``by_value=False``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from stateguard.lineage import TrackedSession
from stateguard.lineage.fingerprint import same_value


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        (pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 2]}), True),
        (pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 3]}), False),
        (pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1.0, 2.0]}), False),  # dtype
        (pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 2]}, index=[5, 6]), False),
        (pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 2], "b": [3, 4]}), False),
        (pd.Series([1.5, np.nan], name="v"), pd.Series([1.5, np.nan], name="v"), True),
        (pd.Series([1.5, 2.0], name="v"), pd.Series([1.5, 2.0], name="w"), False),
        (np.arange(4), np.arange(4), True),
        (np.arange(4), np.arange(4).reshape(2, 2), False),
        (np.array([1.0, np.nan]), np.array([1.0, np.nan]), True),
        ([1, 2, 3], [1, 2, 3], True),
        ([1, 2, 3], [1, 2.0, 3], False),  # 2 and 2.0 are written differently
        ([1, True], [1, 1], False),
        ({"a": 1, "b": 2}, {"a": 1, "b": 2}, True),
        ({"a": 1, "b": 2}, {"a": 1, "b": 3}, False),
        ({1, 2}, {2, 1}, True),
        ([[1], [2]], [[1], [2]], False),  # nested: not provably the same here
        ([1, 2], (1, 2), False),
        (object(), object(), False),
    ],
)
def test_same_value(old: object, new: object, same: bool) -> None:
    assert same_value(old, new) is same


@pytest.fixture
def ts(tracked: TrackedSession) -> Iterator[TrackedSession]:
    """The module's kernel, empty, tracking values (restored after the test)."""
    if not tracked.kernel.is_alive():
        tracked.restart()
    tracked.by_value = True
    tracked.reset()
    yield tracked
    tracked.by_value = True


def _run(ts: TrackedSession, *cells: str) -> None:
    for cell in cells:
        res = ts.execute(cell)
        assert res.execution.ok, (cell, res.execution.error)
        assert res.cell is not None


WRITE = (
    "import pandas as pd, io\n"
    "CSV = 'a,b\\n1,10\\n2,20\\n3,30\\n'\n"
    "load = lambda text=CSV: pd.read_csv(io.StringIO(text))"
)


def _stale(ts: TrackedSession, name: str) -> bool:
    return f"{name}@v1" in ts.graph.stale_live_versions()


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("setup", "again", "reader", "stale"),
    [
        # the same file read again: what came from the first read is current
        (["df = load()", "total = df['b'].sum()"], "df = load()", "total", False),
        # the file changed: it is not
        (
            ["df = load()", "total = df['b'].sum()"],
            "df = load('a,b\\n1,10\\n2,20\\n3,31\\n')",
            "total",
            True,
        ),
        # a grouping computed again from the same data
        (
            ["df = load()", "g = df.groupby('a')['b'].sum()", "top = g.idxmax()"],
            "g = df.groupby('a')['b'].sum()",
            "top",
            False,
        ),
        # a list typed again, and typed otherwise
        (["xs = [1, 2, 3]", "s = sum(xs)"], "xs = [1, 2, 3]", "s", False),
        (["xs = [1, 2, 3]", "s = sum(xs)"], "xs = [1, 2, 4]", "s", True),
        # a re-read drops a column added since: readers of that column only are stale
        (
            ["df = load()", "df['c'] = df['a'] * 2", "total = df['b'].sum()"],
            "df = load()",
            "total",
            False,
        ),
        (
            ["df = load()", "df['c'] = df['a'] * 2", "k = df['c'].sum()"],
            "df = load()",
            "k",
            True,
        ),
        # another name holds the new object: the rebinding stays whole
        (["df = load()", "total = df['b'].sum()", "other = load()"], "df = other", "total", True),
    ],
)
def test_a_rebinding_to_the_same_value_keeps_readers_fresh(
    ts: TrackedSession, setup: list[str], again: str, reader: str, stale: bool
) -> None:
    _run(ts, WRITE, *setup, again)
    assert _stale(ts, reader) is stale


@pytest.mark.kernel
def test_the_cases_rule_versions_every_rebinding(ts: TrackedSession) -> None:
    ts.by_value = False
    ts.reset()
    _run(ts, WRITE, "df = load()", "total = df['b'].sum()", "df = load()")
    assert _stale(ts, "total")


@pytest.mark.kernel
@pytest.mark.parametrize(
    "again",
    [
        # the column rewritten with the same values, and the grouping computed again
        "df['c'] = df['b'] * 2\ng = df.groupby('a')['c'].sum()\ntop = g.idxmax()",
        # in two cells: the grouping was stale in between
        "df['c'] = df['b'] * 2",
    ],
)
def test_a_value_computed_again_from_a_rewritten_column_is_fresh(
    ts: TrackedSession, again: str
) -> None:
    """A name written again with the value it held keeps its version only while that
    version is fresh: one computed from a column since rewritten is computed again from
    the current column, a new version, and what reads it is fresh."""
    _run(ts, WRITE, "df = load()\ndf['c'] = df['b'] * 2", "g = df.groupby('a')['c'].sum()", again)
    _run(ts, "g = df.groupby('a')['c'].sum()\ntotal = round(float(g.sum()), 2)\ntop = g.idxmax()")
    assert ts.graph.stale_live_versions() == {}
    assert not ts.graph.cells[-1].read_stale
    assert ts.graph.current("g").version == 2  # type: ignore[union-attr]
    # the same value written again from fresh inputs keeps its version
    _run(ts, "g = df.groupby('a')['c'].sum()")
    assert ts.graph.current("g").version == 2  # type: ignore[union-attr]
