"""`group_extreme` and `mean_of_ratios`: the extreme of a grouped reduction, and the mean
of a per-row ratio, that a cell shows last."""

from __future__ import annotations

import pytest

from stateguard.audit.extremes import group_extreme
from stateguard.audit.ratios import mean_of_ratios


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "t.groupby('depot')['profit'].sum().max()",
            ("'depot'", "depot", "max", "sum", "t['profit'].sum()"),
        ),
        (
            "x = 1\nprint(t.groupby(t['day'])['kg'].mean().idxmin())",
            ("t['day']", "day", "idxmin", "mean", "t['kg'].mean()"),
        ),
        (
            "print(f\"{t.groupby('a').size().max():.2f}\")",
            ("'a'", "a", "max", "size", None),
        ),
        (
            "t.groupby(['a', 'b'])['v'].sum().nlargest(1)",
            ("['a', 'b']", None, "nlargest", "sum", "t['v'].sum()"),
        ),
    ],
)
def test_the_shown_extreme_of_a_grouping_is_read(code: str, expected: tuple) -> None:
    found = group_extreme(code)
    assert found is not None
    assert (found.key, found.key_column, found.extreme, found.reducer, found.rewrite) == expected


@pytest.mark.parametrize(
    "code",
    [
        "t.groupby('depot')['profit'].max()",  # the largest row of each group: no extreme of
        "t['profit'].sum().max()",  # no grouping
        "m = t.groupby('depot')['profit'].sum().max()",  # bound, not shown
        "t.groupby('depot')['profit'].sum().max()\nprint(1)",  # not what the cell shows last
        "print(t.groupby('a')['v'].sum().max(), 2)",  # a print of two values
        "t.groupby(",  # does not parse
    ],
)
def test_anything_else_is_no_group_extreme(code: str) -> None:
    assert group_extreme(code) is None


@pytest.mark.parametrize(
    ("code", "rewrite"),
    [
        ("(t['p'] / t['b']).mean()", "t['p'].sum() / t['b'].sum()"),
        ("round((t.p / (t.b + t.c) * 100).mean(), 2)", "t.p.sum() / (t.b + t.c).sum() * 100"),
        ("x = 1\n(t.p / t.b).mean() * 100", "t.p.sum() / t.b.sum() * 100"),
        ('print(f"{(a - c) / b).mean():.2f}")', None),  # does not parse
        ("(t.p / 2).mean()", None),  # a column scaled by a number
        ("t.p.mean() / t.b.mean()", None),  # a ratio of means
        ("r = (t.p / t.b).mean()", None),  # not shown
    ],
)
def test_the_shown_mean_of_a_per_row_ratio_is_read(code: str, rewrite: str | None) -> None:
    found = mean_of_ratios(code)
    assert (found and found.rewrite) == rewrite
