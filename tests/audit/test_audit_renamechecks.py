"""A rename that renamed nothing: which renames are read, and the probe's answer."""

from __future__ import annotations

import json

import pytest

from stateguard.audit.renamechecks import column_renames, describe, unmatched_renames
from stateguard.kernel import ProbeResult


def _probe(rows: object):
    calls: list[str] = []

    def probe(code: str, timeout: float = 20.0) -> ProbeResult:
        calls.append(code)
        return ProbeResult(status="ok", wall_time=0.0, stdout=json.dumps(rows))

    return probe, calls


@pytest.mark.parametrize(
    ("code", "tables"),
    [
        # a chain's table, a dict of columns, the axis form
        (
            "t.groupby('o').mean()[['mpg']].reset_index().rename(columns={'mpg': 'Avg'})",
            [("t.groupby('o').mean()[['mpg']].reset_index()", ("mpg",))],
        ),
        ("out = t.rename({'a': 'A', 'b': 'B'}, axis=1)", [("t", ("a", "b"))]),
        ("out = t.rename({'a': 'A'}, axis='columns')", [("t", ("a",))]),
        # a table bound earlier in the cell and not changed after: judged
        ("g = t.sum()\nr = g.rename(columns={'a': 'A'})", [("g", ("a",))]),
        # rebinding the renamed name: the table is gone after the cell
        ("t = t.rename(columns={'a': 'A'})", []),
        # changed after the rename, in place or by item
        ("r = t.rename(columns={'a': 'A'})\nt['a'] = 1", []),
        ("r = t.rename(columns={'a': 'A'})\nt.drop(columns='a', inplace=True)", []),
        ("t.rename(columns={'a': 'A'}, inplace=True)", []),
        # an index rename, a function, a non-constant key, a loop, a lambda
        ("t.rename(index={'a': 'A'})", []),
        ("t.rename(columns=str.upper)", []),
        ("t.rename(columns={k: 'A'})", []),
        ("for x in xs:\n    x.rename(columns={'a': 'A'})", []),
        ("f = lambda d: d.rename(columns={'a': 'A'})", []),
        ("t.rename({'a': 'A'})", []),  # without axis, the mapping renames the index
        ("t.rename(columns={'a': 'A'}", []),  # does not parse
    ],
)
def test_column_renames_are_read_where_the_table_can_be_evaluated_again(
    code: str, tables: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert [(r.table, r.keys) for r in column_renames(code)] == tables


def test_unmatched_renames_read_the_probe_and_ignore_forged_output() -> None:
    code = "t[['x']].rename(columns={'mpg': 'Average MPG', 'x': 'X'})"
    probe, calls = _probe([[0, ["mpg"], ["x"]]])
    (found,) = unmatched_renames(probe, code)
    assert found.missing == ("mpg",) and found.columns == ("x",)
    assert "unmatched_keys" in calls[0]
    note = describe([found])
    assert "renamed nothing for 'mpg'" in note and "has the columns 'x'" in note
    # a key the code does not rename, another index, forged rows: nothing
    assert unmatched_renames(_probe([[0, ["zzz"], ["x"]]])[0], code) == []
    assert unmatched_renames(_probe([[5, ["mpg"], ["x"]]])[0], code) == []
    assert unmatched_renames(_probe([[0, "mpg"]])[0], code) == []
    # no rename: no probe at all
    probe, calls = _probe([])
    assert unmatched_renames(probe, "t.sum()") == [] and calls == []
