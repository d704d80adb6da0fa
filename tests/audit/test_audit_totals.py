"""Totals multiplied together (`stateguard.audit.totals`), read from code alone."""

from __future__ import annotations

import pandas as pd
import pytest

from stateguard.audit.totals import bound_reduction, multiplied_totals


@pytest.mark.parametrize(
    ("src", "found"),
    [
        ("t['w'].sum() * t['r'].sum()", [("t", "w", "r", 1)]),
        ("t.w.sum() * t['r'].sum()", [("t", "w", "r", 1)]),
        ("np.sum(t['w']) * t['r'].sum()", [("t", "w", "r", 1)]),
        ("w = t['w'].sum()\nx = 1\nprint(w * t['r'].sum())", [("t", "w", "r", 3)]),
        ("a = t['w'].sum()\nb = t['r'].sum()\ntotal = a * b", [("t", "w", "r", 3)]),
        ("round(t['w'].sum() * t['w'].sum(), 2)", [("t", "w", "w", 1)]),
    ],
)
def test_the_product_of_two_column_totals_of_one_table_is_found(src: str, found: list) -> None:
    got = [(f.table, f.left, f.right, f.line) for f in multiplied_totals(src)]
    assert got == found


@pytest.mark.parametrize(
    "src",
    [
        "(t['w'] * t['r']).sum()",  # the per-row product, summed: right
        "t['w'] * t['r'].sum()",  # a column times a total (an allocation)
        "a['n'].sum() * b['price'].sum()",  # two tables
        "t['w'].mean() * t['r'].mean()",  # means, not totals
        "t['w'].sum() / t['r'].sum()",  # a ratio of totals: a weighted mean
        "t['w'].sum() * 0.09",  # a total times a rate
        "w = t['w'].sum()\nw = 3\nw * t['r'].sum()",  # the name was bound again
        "w = t['w'].sum()\nfor w in range(3):\n    pass\nw * t['r'].sum()",
        "t['w'].sum(axis=1) * t['r'].sum(axis=1)",  # per-row sums
        "this is not python",
    ],
)
def test_near_misses_are_left_alone(src: str) -> None:
    assert multiplied_totals(src) == []


def test_what_is_found_differs_from_the_total_of_per_row_products() -> None:
    t = pd.DataFrame({"w": [1.0, 2.0, 3.0], "r": [0.5, 0.5, 2.0]})
    [found] = multiplied_totals("t['w'].sum() * t['r'].sum()")
    assert t[found.left].sum() * t[found.right].sum() != (t["w"] * t["r"]).sum()
    assert found.describe() == ("line 1 multiplies the total of `t['w']` by the total of `t['r']`")


@pytest.mark.parametrize(
    ("src", "written", "rewrite"),
    [
        ("t['w'] * t['r'].sum()", "t['w'] * t['r'].sum()", "(t['w'] * t['r']).sum()"),
        (
            "print(a['x'].sum() * 0.9 + a['y'] * 0.03)",
            "a['x'].sum() * 0.9 + a['y'] * 0.03",
            "(a['x'] * 0.9 + a['y'] * 0.03).sum()",
        ),
        ("round(t.w * t.r.mean(), 2)", "t.w * t.r.mean()", "(t.w * t.r).mean()"),
    ],
)
def test_a_reduction_bound_to_one_term_is_rewritten_over_the_whole_formula(
    src: str, written: str, rewrite: str
) -> None:
    found = bound_reduction(src)
    assert found is not None and (found.written, found.rewrite) == (written, rewrite)


@pytest.mark.parametrize(
    "src",
    [
        "(t['w'] * t['r']).sum()",  # reduced over the whole formula already
        "t['w'].sum() * t['r'].sum()",  # both reduced (multiplied_totals' case)
        "t['w'].sum() / u['r']",  # the bare column is another table's
        "t['w'].sum() * t['r'].mean() + t['x']",  # two kinds of reduction
        "t['w'] * 2",  # no reduction
        "t['w'] * t['r'].sum(",  # does not parse
        "t['w'] / t['r'].sum()",  # each row's share of a total: a ratio moves nothing
        # a filtered total over a total: the mask reads a column to select rows
        "t[t['c'] == 'x']['w'].sum() / t['w'].sum() * 100",
        "t[t['c'] == 'x']['w'].sum() * 2 + t['w'].sum()",
    ],
)
def test_formulas_without_a_bound_reduction_are_left_alone(src: str) -> None:
    assert bound_reduction(src) is None
