"""`QuestionSpec.parse` on questions from many sources: DSEval's Kaggle sessions, `so`,
`leetcode` and exercise sets, InfiAgent-DABench, and our own. Each row: the text (as the
source writes it, trimmed), then what the spec must say; anything a row does not name is
not checked. "Not stated" is checked as carefully as what is stated."""

from __future__ import annotations

from typing import Any

import pytest

from stateguard.question import QuestionSpec, decimals

# (source, text, expected fields); thresholds as (value, direction, keeps, percent)
CASES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "kaggle-dev automobile #14",
        "Remove outliers in the data by removing cars with MPG or power-to-weight ratio values"
        " that are more than 3 standard deviations from the mean. Save the cleaned dataset"
        " in-place.",
        {"thresholds": [(3.0, "up", "down", False)], "decimals": None},
    ),
    (
        "kaggle-dev customer-shopping-trends #5",
        "What is the most common category of items purchased by female customers with a"
        " review rating below 3?",
        {"thresholds": [(3.0, "down", "down", False)], "statistic": "extreme"},
    ),
    (
        "kaggle-dev customer-shopping-trends #10",
        "If the customers make more than 35% of their purchases in a single season, the"
        ' location is considered "Seasonal Shopping".',
        {"thresholds": [(35.0, "up", "up", True)], "quoted": ("Seasonal Shopping",)},
    ),
    (
        "kaggle-dev netflix-userbase #6",
        "Assume that a user has churned if their last payment date is more than 15 days away"
        " from the current date.",
        {"thresholds": [(15.0, "up", "up", False)], "statistic": None},
    ),
    (
        "so pandaseval-096",
        "Merge the above two dataframes on column 'company'.",
        {"thresholds": [], "quoted": ("company",)},
    ),
    (
        "so pandaseval-079",
        "Return the dataframe with the rows with one or more NaN values.",
        {"thresholds": [(1.0, "up", "up", False)]},
    ),
    (
        "leetcode big-countries",
        "A country is big if: it has an area of at least three million (i.e., 3000000 km2),"
        " or it has a population of at least twenty-five million (i.e., 25000000).",
        {"thresholds": [(3e6, "up", "up", False)]},
    ),
    (
        "leetcode classes-more-than-5-students",
        "The function should return all the classes that have at least five students.",
        {"thresholds": [(5.0, "up", "up", False)], "statistic": None},
    ),
    (
        "leetcode immediate-food-delivery-i",
        "Find the percentage of immediate orders in the table, rounded to 2 decimal places.",
        {"decimals": 2, "statistic": "share", "percent": False},  # not stated as the form
    ),
    (
        "exercise chipotle #12",
        "How much was the revenue for the period in the dataset? Round to two decimal places.",
        {"decimals": 2},
    ),
    (
        "exercise occupation #15",
        "What is the mean age of users? (rounded to integer)",
        {"decimals": 0, "statistic": "mean"},
    ),
    (
        "exercise chipotle filtering #2",
        "How many products have a unit cost more than $10.00?",
        {"thresholds": [(10.0, "up", "up", False)], "statistic": "count"},
    ),
    (
        "exercise euro12 #7",
        "Calculate the mean Yellow Cards given per Team, rounded to the nearest integer",
        {"decimals": 0, "statistic": "mean"},
    ),
    (
        "dabench 508",
        "Consider the correlation to be significant if its absolute value is greater than 0.5."
        " Round your result to three decimal places.",
        {"decimals": 3, "thresholds": [(0.5, "up", "up", False)]},
    ),
    (
        "dabench 510",
        "Only consider hotel brands that have at least 10 hotels in the dataset. Do not"
        " include hotels without a brand or without a star rating in the calculation.",
        {"thresholds": [(10.0, "up", "up", False)], "join_rows": None},
    ),
    (
        "dabench 116",
        "If a country has a Z score greater than 3 or less than -3, it is considered an outlier.",
        {"thresholds": [(3.0, "up", "up", False), (-3.0, "down", "down", False)]},
    ),
    (
        "dabench 529",
        "Calculate the Pearson correlation coefficient between the number of siblings/spouses"
        " (SibSp) and the number of parents/children (Parch).",
        {"statistic": None, "thresholds": []},
    ),
    (
        "dabench 139",
        "Are the percentage of votes received by the Democratic party in a particular county"
        " normally distributed?",
        {"statistic": None, "percent": False},
    ),
    (
        "ours: one amount as a percentage of another is a share of two totals",
        "What is the gross profit of the Express service as a percentage of the Express"
        " service's billed amount? Give the percentage rounded to 2 decimals.",
        {"decimals": 2, "statistic": "share", "percent": True},
    ),
    (
        "dabench 593: a per-row feature as a percentage of an average asks no one share",
        "Using feature engineering techniques, create a new feature that represents the"
        " waiting time for callers before being answered by an agent as a percentage of the"
        " average abandonment time. Then, explore the distribution of this new feature and"
        " determine if it adheres to a normal distribution.",
        {"statistic": None},
    ),
    (
        "ours: a percentage named as a column is not a share asked",
        "What is the mean of the discount percentage of orders?",
        {"statistic": "mean", "percent": False},
    ),
    (
        "ours: a fraction asked is no percentage",
        "What is the average discount of Enterprise orders sold through the Partner channel?"
        " Give it as a fraction rounded to 4 decimals.",
        {"decimals": 4, "percent": False},
    ),
    (
        "ours: what percentage",
        "What percentage of sessions were cancelled? Round to 1 decimal.",
        {"percent": True},
    ),
    (
        "ours: the worker and the manager once disagreed",
        "What is the average margin, in 2 digits after the decimal point?",
        {"decimals": 2, "statistic": "mean"},
    ),
    (
        "ours: removal and keeping in one clause",
        "Keep only rows with price above 10 and remove those with qty below 2.",
        {"thresholds": [(10.0, "up", "up", False), (2.0, "down", None, False)]},
    ),
    (
        "ours: removal in an earlier sentence does not reach the next",
        "Drop the duplicated rows. How many orders are above 50?",
        {"thresholds": [(50.0, "up", "up", False)], "statistic": "count"},
    ),
    (
        "ours: exclusion verbs",
        "Excluding customers younger than 18, what is the median spend?",
        {"thresholds": [(18.0, "down", "up", False)], "statistic": "median"},
    ),
    (
        "ours: two statistics named",
        "Give the mean and the median of the fare.",
        {"statistic": None},
    ),
    (
        "ours: a join that keeps every row",
        "List every customer with their order count, including those without orders.",
        {"join_rows": "all"},
    ),
    (
        "ours: a join that keeps matches only",
        "Report only the products with a matching supplier record.",
        {"join_rows": "matched"},
    ),
    (
        "ours: a year the rows are kept to",
        "How many bookings were made in 2015 for the city hotel?",
        {"years": (2015,), "statistic": "count"},
    ),
    (
        "ours: a year only mentioned",
        "Compare the same week of 2015 and other years.",
        {"years": ()},
    ),
]


@pytest.mark.parametrize(("source", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_question_spec_reads_what_the_text_states(
    source: str, text: str, expected: dict[str, Any]
) -> None:
    spec = QuestionSpec.parse(text)
    for field, want in expected.items():
        if field == "thresholds":
            got = [(t.value, t.direction, t.keeps, t.percent) for t in spec.thresholds]
        else:
            got = getattr(spec, field)
        assert got == want, f"{source}: {field} is {got!r}, expected {want!r}"


def test_revisions_are_read_from_the_context_too() -> None:
    spec = QuestionSpec.parse(
        "What is the net revenue per hotel now?",
        context="The commission was revised from 12% to 15% on 1 March.",
    )
    assert [(r.old, r.new, r.percent) for r in spec.revisions] == [(12.0, 15.0, True)]
    assert QuestionSpec.parse("What moved from the north to the south?").revisions == ()


def test_named_columns_are_whole_words_of_the_data() -> None:
    spec = QuestionSpec.parse(
        "What is the mean price per region?", columns=["price", "region", "reg", "qty"]
    )
    assert spec.columns == ("price", "region")


@pytest.mark.parametrize(
    ("text", "places"),
    [
        ("Round to 2 decimal places.", 2),
        ("two decimals", 2),
        ("3 d.p.", 3),
        ("2 digits after the decimal point", 2),
        ("rounded to the nearest whole number", 0),
        ("Give the total.", None),
        ("rounded up", None),
    ],
)
def test_one_decimal_parser(text: str, places: int | None) -> None:
    assert decimals(text) == places


def test_the_spec_is_frozen() -> None:
    spec = QuestionSpec.parse("How many rows?")
    with pytest.raises(ValueError):
        spec.decimals = 3  # type: ignore[misc]
