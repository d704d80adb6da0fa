"""Question/code consistency rules and the new mutation kinds (no kernel, no model)."""

from __future__ import annotations

import pytest
from steps import FakeEnv, answer, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.consistency import (
    aggregate_contradictions,
    averaged_amount,
    contradictions,
    fractional_count,
    ignored_names,
    thresholds,
)
from stateguard.verify.mutants import double, sort_order, wrong_aggregate, wrong_column

DET = StepVerifier("deterministic")


def test_thresholds_of_a_question() -> None:
    q = "Rows with deaths greater than 500 or less than 50, and 3 or more wins over 20%"
    assert sorted(thresholds(q)) == [
        (3.0, "up", False),
        (20.0, "up", True),
        (50.0, "down", False),
        (500.0, "up", False),
    ]
    assert thresholds("How many orders with more than one item?") == [(1.0, "up", False)]


@pytest.mark.parametrize(
    ("question", "code", "found"),
    [
        ("Filter teams that scored more than 6 goals.", "df[df.Goals <= 6]", "more than 6"),
        ("Filter teams that scored more than 6 goals.", "df[~(df.Goals > 6)]", "negated"),
        ("Filter teams that scored more than 6 goals.", "df[6 >= df.Goals]", "more than 6"),
        ("Filter teams that scored more than 6 goals.", "df.query('Goals < 6')", "more than 6"),
        ("Who is younger than 30?", "df[df.age >= 30]", "less than 30"),
        (
            "How many times was a Veggie Salad Bowl ordered?",
            "c[c.item != 'Veggie Salad Bowl']",
            "excludes it",
        ),
        (
            'Select the regiments not named "Dragoons"',
            "a[a.regiment == 'Dragoons']",
            "excludes 'Dragoons'",
        ),
        (
            "Find all the volume traded in the year of 2015",
            "vol[vol.index.year != 2015].sum()",
            "asks about '2015' but the code excludes it",
        ),
        ("Which teams did not play in 2012?", "t[t.season == 2012]", "excludes '2012'"),
        ("What did order 1234567 hold?", "o[o.number != 1234567]", "asks about '1234567'"),
    ],
)
def test_a_comparison_against_the_question_is_found(question: str, code: str, found: str) -> None:
    (msg,) = contradictions(question, code)
    assert found in msg


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("Filter teams that scored more than 6 goals.", "df[df.Goals > 6]"),
        ("Filter teams that scored more than 6 goals.", "df[~(df.Goals <= 6)]"),
        ("Rows with deaths greater than 500 or less than 50", "a[(a.d > 500) | (a.d < 50)]"),
        ('Select the regiments not named "Dragoons"', "a[a.regiment != 'Dragoons']"),
        ("How many times was a Veggie Salad Bowl ordered?", "c[c.item == 'Veggie Salad Bowl']"),
        ("What share of orders is above the mean?", "df[df.x < 6]"),  # no number asked
        ("Find all the volume traded in the year of 2015", "vol[vol.index.year == 2015]"),
        ("Which teams did not play in 2012?", "t[t.season != 2012]"),
        ("Filter teams that scored more than 6 goals.", "df[df.Goals != 6]"),  # a threshold
        ("Rows from 2015 onwards", "df[df.year != 20]"),  # 20 is not a number of the question
    ],
)
def test_a_comparison_that_agrees_with_the_question_is_not(question: str, code: str) -> None:
    assert contradictions(question, code) == []


def test_the_contradiction_rule_doubts_a_cell_and_needs_a_cell_that_ran() -> None:
    task = VerifyTask(question="Filter teams that scored more than 6 goals.")
    v = DET.verify(task, [ok("df[df.Goals <= 6]", result="...")])
    assert v.score == 0.5 and v.evidence[-1].check == "question_contradiction"
    assert DET.verify(task, [ok("df[df.Goals > 6]", result="...")]).score == 1.0


def test_ignored_names_from_the_question_and_from_the_data() -> None:
    q = (
        'Mean Goals of teams with more than 6 wins named "Spain" from England, Italy, '
        "as 'Mean Of Goals'"
    )
    # 'Mean Of Goals', quoted, is no value or column of the data: a name to give
    found = [["column", "Goals"], ["value", "Spain"], ["value", "England"], ["value", "Italy"]]
    env = FakeEnv(
        lambda code: ProbeResult(status="ok", wall_time=0.0, value={"found": found, "own": []})
    )
    missed = ignored_names(q, "df[df.Team.isin(['England'])].goals.mean()", env)
    assert missed == [
        "the threshold more than 6",
        "the value 'Spain'",
        "the value 'Italy' of the data",
    ]
    assert "Mean Goals" in env.codes[0]  # the probe is given the question
    used = "df[(df.W > 6) & df.Team.isin(['England', 'Italy', 'Spain'])]['Goals'].mean()"
    assert ignored_names(q, used, env) == []
    assert (
        ignored_names(
            q,
            "df.query('W > 6 and Team in [\\'Spain\\', \\'Italy\\']')"
            ".Goals.mean() + len('England')",
            env,
        )
        == []
    )


def test_columns_of_a_frame_the_step_built_count_as_used() -> None:
    q = "Create the frame from raw_data, keeping the columns ('regiment', 'deaths')"
    env = FakeEnv(
        lambda code: ProbeResult(
            status="ok",
            wall_time=0.0,
            value={"found": [["column", "regiment"]], "own": ["regiment", "deaths"]},
        )
    )
    assert ignored_names(q, "army = pd.DataFrame(raw_data)", env, own=["army"]) == []
    assert "['army']" in env.codes[0]


@pytest.mark.parametrize(
    ("question", "code", "found"),
    [
        ("What is the mean age of users?", "round(users.age.median())", "takes the median"),
        ("Return the median per continent", "d.groupby('c').mean()", "takes the mean"),
        ("How many items were ordered in total?", "chipo.quantity.mean()", "only averages"),
        ("Which continent drinks the most beer?", "s.idxmin()", "takes idxmin"),
        ("Which continent drinks more beer on average?", "s.idxmin()", "takes idxmin"),
        ("Who scored fewer goals?", "g.idxmax()", "the least but the code takes idxmax"),
        (
            "What was the quantity of the most expensive item?",
            "chipo.sort_values(by='price').iloc[0].quantity",
            "first row of an ascending sort",
        ),
        ("Sort it from the most to the least", "a.sort_values(ascending=True)", "sorts ascending"),
        ("Sort by price, lowest first", "a.sort_values('p', ascending=False)", "sorts descending"),
    ],
)
def test_a_statistic_or_order_against_the_question_is_found(
    question: str, code: str, found: str
) -> None:
    (msg,) = aggregate_contradictions(question, code)
    assert found in msg


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("What is the mean age of users?", "users.age.mean()"),
        ("How many items were ordered in total?", "chipo.quantity.sum()"),
        ("Which continent drinks the most beer?", "s.idxmax()"),
        ("Which continent drinks more beer on average?", "s.idxmax()"),
        # a threshold, and a comparison of two things, are not an extreme
        ("Which teams scored more than 6 goals?", "g[g > 6].idxmin()"),
        ("Who drinks more beer than wine?", "(d.beer - d.wine).idxmin()"),
        ("How much more beer is drunk in Europe?", "s.idxmin()"),
        (
            "What was the quantity of the most expensive item?",
            "chipo.sort_values(by='price', ascending=False).iloc[0].quantity",
        ),
        (
            "What was the quantity of the most expensive item?",
            "chipo.sort_values(by='price').iloc[-1].quantity",
        ),
        ("Sort it from the most to the least", "a.sort_values(ascending=False)"),
        (
            "Sort chipo by the name of the item",
            "chipo.sort_values(by='item_name', ascending=False)",
        ),
        ("Mean and median of the age", "users.age.median()"),
    ],
)
def test_a_statistic_or_order_that_agrees_or_is_not_asked_is_not(question: str, code: str) -> None:
    assert aggregate_contradictions(question, code) == []


def test_a_statistic_against_the_question_settles_only_a_result_step() -> None:
    task = VerifyTask(question="What is the mean age of users?")
    step = ok("users.age.median()", result="33.0")
    assert DET.verify(task, [step]).score == 1.0  # an exploration may look at the median
    v = DET.verify(task, [step.model_copy(update={"result": True})])
    assert v.score == 0.5 and "takes the median" in v.rationale


def test_a_result_step_ignoring_the_question_is_doubtful_not_wrong() -> None:
    task = VerifyTask(question="Filter teams that scored more than 6 goals.")
    step = ok("euro12[['Team', 'Goals']]", result="Team Goals\n...")
    doubtful = step.model_copy(update={"result": True})
    v = DET.verify(task, [doubtful])
    assert v.score == 0.5 and "threshold more than 6" in v.rationale
    assert DET.verify(task, [step]).score == 1.0  # an intermediate step may prepare data
    assert DET.verify(task, [step, answer("All the teams")]).score == 0.5  # the answer too


def test_a_result_showing_a_stored_table_whose_condition_nothing_applied_is_doubted() -> None:
    task = VerifyTask(question="Filter teams that scored more than 6 goals.")
    bare = ok("(euro12)", result="Team Goals\n...").model_copy(update={"result": True})
    v = DET.verify(task, [bare])
    assert v.score == 0.5 and "`(euro12)` as it is" in v.rationale
    # near misses: an earlier step applied the threshold; a bare name that is not a result
    earlier = ok("euro12 = euro12[euro12.Goals > 6]")
    assert DET.verify(task, [earlier, bare]).score == 1.0
    assert DET.verify(task, [bare.model_copy(update={"result": False})]).score == 1.0


def test_wrong_column_replaces_one_column_reference_at_a_time() -> None:
    out = wrong_column("df['a'].sum() + df.b.mean()", ["a", "b", "c"])
    assert out == [
        "df['b'].sum() + df.b.mean()",
        "df['a'].sum() + df.c.mean()",
        "df['c'].sum() + df.b.mean()",
        "df['a'].sum() + df.a.mean()",
    ]
    assert wrong_column("df['a'].sum()", ["a"]) == []
    assert wrong_column("x.sum()", ["a", "b"]) == []


def test_wrong_aggregate_and_sort_order() -> None:
    assert wrong_aggregate("s.max() - s.idxmin()") == [
        "s.min() - s.idxmin()",
        "s.max() - s.idxmax()",
    ]
    assert sort_order("df.sort_values('x')") == ["df.sort_values('x', ascending=False)"]
    assert sort_order("df.sort_values('x', ascending=False)") == [
        "df.sort_values('x', ascending=True)"
    ]
    assert sort_order("df.head()") == [] and wrong_aggregate("df.head()") == []


def test_double_plants_two_faults_of_different_kinds() -> None:
    both = double({"agg": wrong_aggregate, "sort": sort_order})
    out = both("s.max() + df.sort_values('x').y.sum()", [])
    assert "s.min() + df.sort_values('x', ascending=False).y.sum()" in out
    assert all(v.count("min") + v.count("mean") + v.count("ascending") >= 2 for v in out)
    assert double({"agg": wrong_aggregate})("s.max()", []) == []  # one kind: no pair


@pytest.mark.parametrize(
    ("question", "code", "flagged"),
    [
        ("Count the number of missing values", "wine.isna().sum().mean()", True),
        ("How many missing values do we have?", "round(wine.isna().sum().mean())", True),
        ("How many missing values do we have?", "wine.isna().sum().sum()", False),
        ("What is the average number of items per order?", "x.groupby('o').size().mean()", False),
        ("What percentage of the number of rows is missing?", "x.isna().mean()", False),
        ("How many rows?", "n = x.mean()\nlen(x)", False),  # the last statement counts
    ],
)
def test_a_count_whose_result_is_a_mean(question: str, code: str, flagged: bool) -> None:
    found = [m for m in aggregate_contradictions(question, code) if "count or total" in m]
    assert bool(found) is flagged


@pytest.mark.parametrize(
    ("question", "shown"),
    [
        ("How many missing values do we have?", "0.4157303370786517"),
        ("Count the number of missing values", "np.float64(2.5)"),
    ],
)
def test_a_count_that_is_not_a_whole_number(question: str, shown: str) -> None:
    found = fractional_count(question, shown)
    assert found is not None and "not a whole number" in found


@pytest.mark.parametrize(
    ("question", "shown"),
    [
        ("How many missing values do we have?", "276"),  # whole
        ("How many missing values do we have?", "276.0"),  # whole, as a float
        ("How many items does an order have on average?", "2.71"),  # a mean asked
        ("How many times more beer than wine?", "1.83"),  # a ratio
        ("How many hours did the flight last?", "2.5"),  # a unit of measure
        ("What is the share of missing values?", "0.41"),  # no count asked
        ("How many missing values per column?", "0.5"),  # a rate
        ("How many missing values do we have?", "a    3\nb    1.5"),  # not one number
    ],
)
def test_near_misses_of_a_fractional_count(question: str, shown: str) -> None:
    assert fractional_count(question, shown) is None


def test_the_count_rule_judges_result_steps_only() -> None:
    task = VerifyTask(question="How many missing values do we have?")
    step = ok("wine.isna().mean().sum()", result="0.4157303370786517")
    v = DET.verify(task, [step.model_copy(update={"result": True})])
    assert v.score == 0.5 and v.evidence[0].check == "count_not_whole", v.rationale
    assert DET.verify(task, [step]).score == 1.0  # an exploration may compute shares


def _named(found: list[list[str]]) -> FakeEnv:
    return FakeEnv(
        lambda code: ProbeResult(status="ok", wall_time=0.0, value={"found": found, "own": []})
    )


def test_a_list_of_values_the_code_applies_in_part() -> None:
    q = "Present only the Shooting Accuracy from England, Italy and Russia."
    env = _named([["value", v, "Team"] for v in ("England", "Italy", "Russia")])
    some = "euro12.loc[euro12.Team.isin(['England', 'Italy']), ['Team', 'Shooting Accuracy']]"
    missed = ignored_names(q, some, env)
    assert missed[-1] == (
        "part of the list 'England', 'Italy', 'Russia' of 'Team': the code uses "
        "'England', 'Italy' only"
    )
    step = ok(some, result="...").model_copy(update={"result": True})
    v = DET.verify(VerifyTask(question=q), [step], env=env)
    assert v.score == 0.5 and v.evidence[0].check == "question_ignored", v.rationale
    # near misses: every value used; none used (a doubt only); values nested in another
    every = some.replace("'Italy']", "'Italy', 'Russia']")
    assert ignored_names(q, every, env) == []
    none = ok("euro12[['Team', 'Shooting Accuracy']]", result="...")
    none = none.model_copy(update={"result": True})
    assert DET.verify(VerifyTask(question=q), [none], env=env).score == 0.5
    nested = _named([["value", v, "item"] for v in ("Veggie Salad Bowl", "Salad", "Bowl")])
    salad = "chipo_salad = chipo[chipo.item == 'Veggie Salad Bowl']"
    assert ignored_names("How many times was a Veggie Salad Bowl ordered?", salad, nested) == []
    # a name of the code is not a value it applies
    named_only = "chipo_salad = chipo\nlen(chipo_salad)"
    q2 = "How many times was a Veggie Salad Bowl ordered?"
    assert not any(m.startswith("part of") for m in ignored_names(q2, named_only, nested))


@pytest.mark.parametrize(
    ("code", "applied"),
    [
        ("df[df.quantity > 1]", True),
        ("df[1 < df.quantity]", True),
        ("df[df.quantity >= 2]", True),  # a whole number: >= 2 is "more than 1"
        ("df[df.quantity.gt(1)]", True),
        ("df.query('quantity > 1')", True),
        ("df[df.quantity == 1]", False),  # the number, but not "more than"
        ("df[df.quantity < 1]", False),  # the other way
        ("df[~(df.quantity > 1)]", False),  # negated
        ("x = s[1:-1]\ndf[df.item == 'Canned Soda']", True),  # used otherwise: not judged
    ],
)
def test_a_threshold_is_applied_in_its_direction(code: str, applied: bool) -> None:
    q = "How many times did someone order more than one Canned Soda?"
    missed = ignored_names(q, code, None)
    assert ("the threshold more than 1" not in missed) is applied


@pytest.mark.parametrize(
    ("question", "code", "doubted"),
    [
        ("How much was the revenue for the period?",
         "revenue = (chipo.quantity * chipo.item_price).mean()\nnp.round(revenue, 2)", True),
        ("Find all the volume traded in the year of 2015", "vol.groupby('stock').mean()", True),
        ("Find all the volume traded in the year of 2015", "vol.groupby('stock').sum()", False),
        # a mean, a share or a per-thing value asked for; no amount asked
        ("How much is spent per order?", "orders.total.mean()", False),
        ("How much is the average price?", "chipo.item_price.mean()", False),
        ("How much of the revenue is from bowls, as a share?", "x.mean()", False),
        ("What was the revenue?", "chipo.revenue.mean()", False),
        ("How much was the revenue?", "r = chipo.revenue.mean()\nr = r.sum()\nr", False),
    ],
)  # fmt: skip
def test_a_mean_where_an_amount_is_asked_is_a_doubt(
    question: str, code: str, doubted: bool
) -> None:
    assert (averaged_amount(question, code) is not None) is doubted


def test_the_amount_rule_scores_a_result_step_half() -> None:
    task = VerifyTask(question="How much was the revenue for the period?")
    step = ok("(chipo.quantity * chipo.item_price).mean()", result="18.81")
    v = DET.verify(task, [step.model_copy(update={"result": True})])
    assert v.score == 0.5 and v.evidence[0].check == "averaged_amount", v.rationale
    assert DET.verify(task, [step]).score == 1.0  # an exploration may take a mean


@pytest.mark.parametrize(
    ("question", "code", "ignored"),
    [
        ("Find all the volume traded in the year of 2015", "vol.groupby('stock').sum()", True),
        ("How many games were won in 2012?", "df.won.sum()", True),
        ("What was the revenue for the year 2019?", "df.revenue.sum()", True),
        # the year used, as a number or inside a date string
        ("Find all the volume traded in the year of 2015",
         "vol[vol.index.year == 2015].groupby('stock').sum()", False),
        ("How many games were won in 2012?", "df.loc['2012-01-01':].won.sum()", False),
        # a year mentioned, not kept to; a date, not a year
        ("Do not sum data from the same week of 2015 and other years", "vol.sum()", False),
        ("What happened in 2015-03?", "df.x.sum()", False),
        ("Which team won more than 2015 points?", "df[df.points > 2015]", False),
    ],
)  # fmt: skip
def test_a_year_the_question_keeps_rows_to_is_ignored_when_no_code_uses_it(
    question: str, code: str, ignored: bool
) -> None:
    found = [m for m in ignored_names(question, code, None) if m.startswith("the year")]
    assert bool(found) is ignored, found
