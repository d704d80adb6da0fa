"""Expressions fixed by their form: found, and their near misses not."""

from __future__ import annotations

import pytest
from steps import ok

from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.degenerate import (
    averaged_twice,
    degenerate,
    one_sided_ranges,
    self_products,
)


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("(apple.index.min() - apple.index.min()).days", "same operand on both sides"),
        ("df.a / df.a", "same operand on both sides"),
        ("df[df.price < df.price]", "compares a value with itself"),
        ("army[['deaths', 'deaths']]", "selects 'deaths' twice"),
        ("(c.loc[c.m.idxmin(), 'n'], c.loc[c.m.idxmin(), 'n'])", "same computed value twice"),
        ("print([df.a.max(), df.b.max(), df.a.max()])", "same computed value twice"),
        ("{'Age': s['Age'].corr(s['Age']), 'YoE': 0}", "sets a value against itself"),
        ("pearsonr(df.x, df.x)", "sets a value against itself"),
        ("(s['p'] * s['q'] + s['Total'] - s['Total']).abs().max()", "drops out"),
        ("df.a - df.b + df.b", "drops out"),
        ("cars.groupby('o')['o'].agg(lambda x: x.value_counts().idxmax())", "grouping key 'o'"),
        ("df.groupby(['k', 'j'])['k'].first()", "grouping key 'k'"),
        ("df.groupby(by='k').k.nunique()", "grouping key 'k'"),
        ("df.groupby('k')['k'].agg('max')", "grouping key 'k'"),
    ],
)
def test_an_expression_fixed_by_its_form_is_found(code: str, found: str) -> None:
    (msg,) = degenerate(code)
    assert found in msg


@pytest.mark.parametrize(
    "code",
    [
        "(apple.index.max() - apple.index.min()).days",
        "df[df.k != df.k]",  # the NaN test
        "df[df.k == df.k]",
        "x = 1 - 1",  # literals
        "army[['deaths', 'veterans']]",
        "(c.loc[c.m.idxmax(), 'n'], c.loc[c.m.idxmin(), 'n'])",
        "(a, a)",  # names, not computed values
        "x, y = f(), f()",  # bound to names, not shown
        "[f(), f()]\nx = 1",  # not the last statement
        "('n', 'n')",
        "df.a * df.a",  # a square is not fixed
        "df.x.corr(df.y)",
        "df.corr()",
        "pearsonr(df.x, df.y)",
        "(end - mid) + (mid - start)",  # a bracketed sum is one term
        "df.a + df.b - df.c",
        "df.groupby('k')['k'].count()",  # a count per key is the idiom
        "df.groupby('k')['k'].size()",
        "df.groupby('k')['v'].max()",
        "df.groupby('k')['v'].agg(lambda x: x.value_counts().idxmax())",
        "df[",
    ],
)
def test_near_misses_are_not(code: str) -> None:
    assert degenerate(code) == []


def test_the_rule_scores_a_cell_that_ran_zero() -> None:
    task = VerifyTask(question="How many days lie between the first and the last day?")
    v = StepVerifier("deterministic").verify(task, [ok("(d.max() - d.max()).days", result="0")])
    assert v.score == 0.0 and v.evidence[0].check == "fixed_by_form"
    right = ok("(d.max() - d.min()).days", result="6000")
    assert StepVerifier("deterministic").verify(task, [right]).score == 1.0


def test_a_column_times_itself_is_a_doubt_unless_a_square_is_asked() -> None:
    q = "How much was the revenue for the period?"
    (msg,) = self_products("rev = (chipo['quantity'] * chipo['quantity']).sum()", q)
    assert "multiplies a column by itself" in msg
    assert self_products("rev = (chipo.quantity * chipo.quantity).sum()", q)
    # two different columns, a constant, or a square the question asks for
    assert self_products("(chipo['quantity'] * chipo['item_price']).sum()", q) == []
    assert self_products("chipo['quantity'] * 2", q) == []
    assert self_products("x * x", q) == []  # not a column of a frame
    assert self_products("(df.err * df.err).mean()", "What is the mean squared error?") == []
    task = VerifyTask(question=q)
    step = ok("(chipo['quantity'] * chipo['quantity']).sum()", result="4972")
    v = StepVerifier("deterministic").verify(task, [step.model_copy(update={"result": True})])
    assert v.score == 0.5 and v.evidence[0].check == "self_product", v.rationale


def test_a_mean_divided_by_a_count_is_a_doubt() -> None:
    code = "a = users.groupby('occupation').gender_n.mean() / users.occupation.value_counts() * 100"
    (msg,) = averaged_twice(code)
    assert "divides a mean by a count" in msg
    assert averaged_twice("df.x.mean() / len(df)")
    assert averaged_twice("df.groupby('g').x.mean()['a'] / df.g.nunique()")
    # a sum over a count, a mean over a sum or a constant: near misses
    assert averaged_twice("users.groupby('o').g.sum() / users.o.value_counts() * 100") == []
    assert averaged_twice("df.x.mean() / df.x.sum()") == []
    assert averaged_twice("df.x.mean() / 100") == []
    assert averaged_twice("df.x.mean(") == []
    task = VerifyTask(question="Discover the Male percentage per occupation")
    step = ok(code + "\na", result="occupation …").model_copy(update={"result": True})
    v = StepVerifier("deterministic").verify(task, [step])
    assert v.score == 0.5 and v.evidence[0].check == "averaged_twice", v.rationale


@pytest.mark.parametrize(
    ("code", "side"),
    [
        ("dists[np.where(np.logical_and(dists < r, dists <= r + dr))]", "above"),
        ("dists[np.where(np.logical_and(dists >= r, dists > r + dr))]", "below"),
        ("df[(df.a > 5) & (df.a > 10)]", "below"),
        ("df[(5 < df.a) & (df.a > 10)]", "below"),  # the value on either side
        ("df[(df.a > 5) & (df.a < 10) & (df.a > 7)]", "below"),
        ("df.a.lt(3) if False else df[(df.a < 3) and (df.a < 9)]", "above"),
    ],
)
def test_two_bounds_on_one_value_from_one_side_are_found(code: str, side: str) -> None:
    (msg,) = one_sided_ranges(code)
    assert f"from {side} twice" in msg


def test_a_chain_of_conditions_is_read_once() -> None:
    (msg,) = one_sided_ranges("df[(df.a < 5) & (df.a < 10) & (df.b > 1)]")
    assert msg.startswith("`(df.a < 5) & (df.a < 10) & (df.b > 1)`")


@pytest.mark.parametrize(
    "code",
    [
        "dists[np.where(np.logical_and(dists >= r, dists <= r + dr))]",  # a range
        "df[(df.a > 5) & (df.a > df.b)]",  # a column bound: both can be meant
        "(a < b) & (a < c)",  # unrelated names, maybe arrays
        "(lo < x) & (lo < y)",
        "df[(df.a > 5) & (df.b > 10)]",  # two values
        "x > 1 and x > 1",  # the same bound twice is not a range
        "df[(df.a > 5) | (df.a > 10)]",  # or
        "(d < r) & (",
    ],
)
def test_near_misses_of_one_sided_ranges_are_not(code: str) -> None:
    assert one_sided_ranges(code) == []


def test_a_one_sided_range_is_a_doubt() -> None:
    task = VerifyTask(question="Select the distances that lie in the shell from r to r + dr")
    code = "dists[np.where(np.logical_and(dists < r, dists <= r + dr))]"
    step = ok(code, result="array([1.2, 2.3])").model_copy(update={"result": True})
    v = StepVerifier("deterministic").verify(task, [step])
    assert v.score == 0.5 and v.evidence[0].check == "one_sided_range", v.rationale
