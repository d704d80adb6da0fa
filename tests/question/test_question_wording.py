"""What a question's wording asks for, read in `stateguard.question`: the aggregate
wordings (`aggregate_words`), a condition on rows (`row_condition`), the rows of a join
(`rows_asked`), a value written in it and whether it is excluded (`value_mentions`,
`names_number`), and the quoted values and years it keeps rows to (`quoted_values`,
`kept_years`). Questions from the exercise sets, DSEval's Kaggle sessions,
InfiAgent-DABench and our own; "not stated" is checked as carefully as what is stated."""

from __future__ import annotations

import pytest

from stateguard.question import (
    AggregateWords,
    aggregate_words,
    kept_years,
    names_number,
    quoted_values,
    row_condition,
    rows_asked,
    value_mentions,
)

# (source, question, the flags and amount that are set; every other flag False)
AGGREGATES: list[tuple[str, str, dict[str, object]]] = [
    (
        "exercise chipotle #12",
        "How much was the revenue for the period in the dataset?",
        {"amount": "How much"},
    ),
    (
        "exercise occupation #15",
        "What is the mean age of users?",
        {"mean": True},
    ),
    (
        "exercise chipotle #14",
        "How many times was a Veggie Salad Bowl ordered?",
        {"total": True, "count": True, "how_many": True, "not_a_count": True},
    ),
    (
        "exercise chipotle #10",
        "How many items were ordered in total?",
        {"total": True, "count": True, "how_many": True},
    ),
    (
        "kaggle-dev customer-shopping-trends #5",
        "What is the most common category of items purchased by female customers?",
        {"most": True},
    ),
    (
        "exercise drinks #3",
        "Which continent drinks more beer on average?",
        {"most": True, "mean": True},
    ),
    (
        "ours: a comparison, not an extreme",
        "Which stores sold more than 100 units?",
        {"not_a_count": True},
    ),
    (
        "ours: the fewest",
        "Who has fewer wins?",
        {"least": True},
    ),
    (
        "exercise euro12 #9",
        "Sort the teams by Red Cards then by Yellow Cards, from highest to lowest",
        {"most": True, "least": True, "descending": True},
    ),
    (
        "ours: ascending",
        "List the regions in ascending order of revenue",
        {"ascending": True},
    ),
    (
        "dabench 139",
        "What is the percentage of votes received per county?",
        {"share": True, "per_thing": True, "not_a_count": True},
    ),
    (
        "ours: a number of things",
        "What is the number of orders with all the items?",
        {"count": True, "how_many": True, "amount": "all the"},
    ),
    (
        "ours: the median",
        "Give the median fare.",
        {"median": True},
    ),
    (
        "ours: a square",
        "What is the variance of the price?",
        {"square": True},
    ),
    ("not stated: no aggregate wording", "Load the csv file into a DataFrame.", {}),
    ("not stated: empty", "", {}),
]


@pytest.mark.parametrize(("source", "question", "set_"), AGGREGATES, ids=[a[0] for a in AGGREGATES])
def test_the_aggregate_wordings_a_question_uses(
    source: str, question: str, set_: dict[str, object]
) -> None:
    assert aggregate_words(question) == AggregateWords(**set_), source  # type: ignore[arg-type]


def test_the_aggregate_wordings_are_frozen() -> None:
    found = aggregate_words("What is the mean age?")
    with pytest.raises(ValueError):
        found.mean = False  # type: ignore[misc]


@pytest.mark.parametrize(
    ("question", "condition"),
    [
        (
            "exercise euro12 #11: Select the rows of the teams that start with G",
            "rows of the teams that",
        ),
        ("exercise army: Select the rows where deaths > 50", "rows where"),
        ("Show the records whose price is above 10", "records whose"),
        ("Keep the observations with a missing age", "observations with"),
        # not stated: no rows asked for, or the condition is too far from "rows"
        ("How many teams start with G?", None),
        ("Drop the rows.", None),
        ("Show the rows of the table of the teams of the league of the year that won", None),
    ],
)
def test_where_a_question_asks_for_rows_under_a_condition(
    question: str, condition: str | None
) -> None:
    assert row_condition(question) == condition


@pytest.mark.parametrize(
    ("question", "rows"),
    [
        ("Merge the orders with all the customers, even if they never ordered", "all"),
        ("Use a left join of sales on regions", "all"),
        ("Inner join the two tables on year", "matching"),
        ("Keep the ids found in both tables", "matching"),
        ("Merge sales and targets on year", "unstated"),
        ("", "unstated"),
        (None, None),
    ],
)
def test_the_rows_a_join_should_keep(question: str | None, rows: str | None) -> None:
    assert rows_asked(question) == rows


@pytest.mark.parametrize(
    ("question", "value", "negated"),
    [
        ("How many Veggie Salad Bowl orders are there?", "veggie salad bowl", [False]),
        ("Which regiment, not named Dragoons, lost the most?", "Dragoons", [True]),
        ("Excluding 'Chicken Bowl', what is the mean price?", "Chicken Bowl", [True]),
        ("Compare Nighthawks with teams other than Nighthawks", "Nighthawks", [False, True]),
        ("How many bookings in 2015 were canceled?", "2015", [False]),
        # a negation too far before the value does not reach it
        ("Do not round; what is the total of the orders of Nighthawks?", "Nighthawks", [False]),
        # not stated: part of another word or number, or absent
        ("How many bookings in 20150 were canceled?", "2015", []),
        ("Which regiment is the Dragoonsguard?", "Dragoons", []),
        ("What is the mean price?", "Chicken Bowl", []),
        ("A charge of 0.90 per kg of weight_kg", "0", []),  # a part of a number
        ("Parcels of zone 1.", "1", [False]),  # at the end of a sentence
    ],
)
def test_where_a_question_writes_a_value_and_whether_it_excludes_it(
    question: str, value: str, negated: list[bool]
) -> None:
    found = value_mentions(question, value)
    assert [m.negated for m in found] == negated
    assert all(question[m.start :].lower().startswith(value.lower()) for m in found)


@pytest.mark.parametrize(
    ("question", "written", "named"),
    [
        ("What is the price of the order with id 1?", "1", True),
        ("What is the price of each item?", "1", False),
        ("Orders above 12.5 dollars", "12.5", True),
        ("Orders above 12.5 dollars", "12", False),
        ("Orders above 1.5 dollars", "1", False),
        ("Orders of customer x1", "1", False),
        # a full stop after a number ends the sentence; one before a digit is a decimal point
        ("Count the senders whose charges are above 500.", "500", True),
        ("A returned parcel is charged a flat fee of 6.50.", "6.50", True),
        ("A returned parcel is charged a flat fee of 6.50.", "6", False),
        ("The rate is 0.90 per kg.", "0", False),
    ],
)
def test_a_number_written_whole_in_the_question(question: str, written: str, named: bool) -> None:
    assert names_number(question, written) == named


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("How many times was 'Veggie Salad Bowl' ordered?", ["Veggie Salad Bowl"]),
        ('The location is considered "Seasonal Shopping ".', ["Seasonal Shopping "]),
        ("Merge the above two dataframes on column 'company'.", ["company"]),
        ("Compare `2019` with `2020`", ["2019", "2020"]),
        # not stated: an apostrophe, a one-letter quote
        ("What is the team's best score?", []),
        ("Select the grade 'A' students", []),
        # apostrophes are no quotes, in pairs or beside real ones; quotes pair by kind
        ("Unify Bachelor's and Master's Degree into 'High School'", ["High School"]),
        ("You don't need where if you don't want it", []),
        ("Keep the 0's and 1's", []),
        ("Give { 'Salary': <corr>, 'Years': <corr> }", ["Salary", "Years"]),
        ("Say “Hello there” or ‘bye now’", ["Hello there", "bye now"]),
        ('It\'s "North" here', ["North"]),
    ],
)
def test_the_values_a_question_quotes_as_written(question: str, quoted: list[str]) -> None:
    assert quoted_values(question) == quoted


@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("How many bookings were made in 2015 for the city hotel?", [2015]),
        ("What was the revenue in the year of 2012?", [2012]),
        ("Which team won during the season 2019 and in 2019 again?", [2019, 2019]),
        ("year 1998 and for 2001", [1998, 2001]),
        # not stated: a year only mentioned, a date, or no year
        ("Compare the same week of 2015 and other years.", []),
        ("What happened in 2015-03?", []),
        ("How many bookings in 1750?", []),
        ("What is the mean price?", []),
    ],
)
def test_the_years_a_question_keeps_rows_to(question: str, years: list[int]) -> None:
    assert kept_years(question) == years
