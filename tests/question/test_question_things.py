"""The things a question asks about (`stateguard.question.things`): the one thing a value
is asked per, the groups a share or count is of, the things a threshold counts. Questions
from the exercise sets (chipotle, occupation, euro12, army), DSEval's Kaggle sessions and
our own; "not stated" (None, nothing) is checked as carefully as what is stated."""

from __future__ import annotations

import pytest

from stateguard.question import (
    asked_entity,
    asked_groups,
    counted_by_total,
    counted_things,
    words,
)


@pytest.mark.parametrize(
    ("question", "entity"),
    [
        ("exercise chipotle #17: What is the price of each item?", "item"),
        ("exercise occupation #4: Discover the Male percentage per occupation", "occupation"),
        ("Give the revenue for every year, sorted by year", "year"),
        ("What is the mean age for each one of the occupations?", "occupation"),
        ("exercise euro12: Calculate the mean Yellow Cards given per Team", "team"),
        # not stated: two things, or no thing at all
        ("What is the revenue per region per year?", None),
        ("Group by each regiment and company?", None),
        ("What is the share of cars per cent of the total?", None),
        ("Count the rows where each one is missing", None),
        ("How many orders are there?", None),
        ("", None),
    ],
)
def test_the_one_thing_a_value_is_asked_per(question: str, entity: str | None) -> None:
    assert asked_entity(question) == entity


@pytest.mark.parametrize(
    ("question", "groups"),
    [
        # "percentage per" reads "per" too: a word no category is named by
        ("exercise occupation #4: Discover the Male percentage per occupation", ["Male", "per"]),
        ("What is the share of women among the passengers?", ["women"]),
        ("How many smokers are in the insurance data?", ["smokers"]),
        (
            "kaggle titanic: What is the survival rate of the female passengers?",
            ["survival", "female"],
        ),
        ("What is the number of unique customers?", ["customers"]),
        # the word after "of" only: "female" here is not read ("users" names no category)
        ("What is the percentage of users who are female?", ["users"]),
        # not stated: a share or count of no group
        ("What is the proportion of the total?", []),
        ("How many rows are missing?", []),
        ("What is the total number of orders?", ["orders"]),
        ("What is the mean age of the users?", []),
    ],
)
def test_the_groups_a_share_or_count_is_of(question: str, groups: list[str]) -> None:
    assert asked_groups(question) == groups


@pytest.mark.parametrize(
    ("question", "things", "counted"),
    [
        (
            "exercise chipotle filtering: How many orders have more than one Canned Soda?",
            ["Canned Soda", "Chicken Bowl"],
            [(1.0, "Canned Soda")],
        ),
        (
            "Which customers bought at least 2 chicken bowls?",
            ["Chicken Bowl"],
            [(2.0, "chicken bowls")],
        ),
        # not stated: the thing is not right after the number, or there is no threshold
        ("How many orders have a Canned Soda and more than one item?", ["Canned Soda"], []),
        ("How many Canned Soda were ordered?", ["Canned Soda"], []),
        ("Orders with more than 3 items", [], []),
    ],
)
def test_the_things_a_threshold_counts(
    question: str, things: list[str], counted: list[tuple[float, str]]
) -> None:
    got = counted_things(question, [words(t) for t in things])
    assert [(t.value, thing) for t, thing in got] == counted


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many buyers have tickets whose total 2025 net is above 320?", ("buyer", 320.0)),
        ("How many households have a total 2025 cost above 900 now?", ("household", 900.0)),
        ("How many patients had a total stay of less than 3 days?", ("patient", 3.0)),
        ("How many categories have total sales over 1,000?", ("category", 1000.0)),
        # not stated: no total, a count, the total after the threshold, two thresholds
        ("How many cars have a price above 20000?", None),
        ("How many stores have a total number of sales above 10?", None),
        ("How many customers spent more than 100 in total?", None),
        ("How many regions have a total above 5 and below 10?", None),
        ("What is the total revenue above 100?", None),
    ],
)
def test_things_counted_by_a_total_of_each(question: str, expected: tuple | None) -> None:
    found = counted_by_total(question)
    got = None if found is None else (found.thing, found.threshold.value)
    assert got == expected
