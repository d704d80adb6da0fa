"""The words of a question and the columns it names (`stateguard.question.stems`,
`stateguard.question.columns`), on questions from the exercise sets (chipotle, occupation,
army, euro12), DSEval's Kaggle sessions and our own. "Not stated" (no column, no
subject) is checked as carefully as what is stated."""

from __future__ import annotations

import pytest

from stateguard.question import (
    described_columns,
    is_generic,
    named_columns,
    noun_named_columns,
    speaks_of_columns,
    speaks_of_ids,
    stem,
    threshold_subjects,
    word_spans,
    words,
)

USERS = ["user_id", "age", "gender", "occupation", "zip_code"]
ARMY = ["regiment", "company", "deaths", "battles", "veterans", "deserters", "size"]
CHIPO = ["order_id", "quantity", "item_name", "choice_description", "item_price"]
EURO = ["Team", "Goals", "Yellow Cards", "Red Cards", "Shots on target"]


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("Occupations", "occupation"),
        ("cities", "city"),
        ("boxes", "box"),
        ("matches", "match"),
        ("classes", "class"),
        ("status", "status"),
        ("axis", "axis"),
        ("gas", "gas"),  # too short to lose its s
        ("ties", "tie"),  # too short for -ies → -y
    ],
)
def test_a_plural_is_stemmed_to_its_singular(word: str, stemmed: str) -> None:
    assert stem(word) == stemmed


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("item_price", ["item", "price"]),
        ("ItemPrice", ["item", "price"]),
        ("Yellow Cards", ["yellow", "card"]),
        ("RPT_value2", ["rpt", "value", "2"]),
        ("HTTPStatus", ["http", "status"]),
        ("", []),
    ],
)
def test_a_name_splits_into_stemmed_words(name: str, expected: list[str]) -> None:
    assert words(name) == expected


def test_word_spans_give_each_words_place_in_the_text() -> None:
    q = "How many orders?"
    assert word_spans(q) == [(0, 3, "how"), (4, 8, "many"), (9, 15, "order")]
    assert [q[s:e] for s, e, _ in word_spans(q)] == ["How", "many", "orders"]
    assert word_spans("?!") == []


@pytest.mark.parametrize(
    ("column", "generic"),
    [
        ("id", True),
        ("Unnamed", True),
        ("Unnamed: 0", False),  # the number is a word of its own
        ("order_id", False),
        ("name", True),
        ("item_name", False),
        ("total_count", True),
        ("", True),
    ],
)
def test_a_name_of_generic_words_only_is_never_named(column: str, generic: bool) -> None:
    assert is_generic(column) == generic


@pytest.mark.parametrize(
    ("question", "columns", "named"),
    [
        (
            "exercise occupation #8: How many different occupations are in this dataset?",
            USERS,
            {"occupation"},
        ),
        ("exercise chipotle #13: What is the mean item price?", CHIPO, {"item_price"}),
        (
            "exercise euro12 #7: Calculate the mean Yellow Cards given per Team",
            EURO,
            {"Yellow Cards", "Team"},
        ),
        (
            "exercise army: What is the mean number of deaths per regiment?",
            ARMY,
            {"deaths", "regiment"},
        ),
        # not stated: the words of a name must all be there; generic names never count
        ("exercise chipotle: How many items were ordered?", CHIPO, set()),
        ("What is the total count of rows by id?", ["id", "count", "total"], set()),
        ("", USERS, set()),
        # a name used only inside a longer named one is not named; used apart, it is
        (
            "Which car has the highest power-to-weight ratio?",
            ["weight", "power_to_weight", "mpg"],
            {"power_to_weight"},
        ),
        (
            "Compare the weight of each car with its power-to-weight ratio",
            ["weight", "power_to_weight", "mpg"],
            {"weight", "power_to_weight"},
        ),
        ("What is the mean unit price?", ["Unit price", "price"], {"Unit price"}),
        ("What is the unit price and the price?", ["Unit price", "price"], {"Unit price", "price"}),
    ],
)
def test_the_columns_a_question_names(question: str, columns: list[str], named: set[str]) -> None:
    assert named_columns(question, columns) == named


SHIPMENTS = ["shipment_id", "shipped_on", "sender_id", "weight_kg", "zone", "declared_value"]
SENDERS = ["sender_id", "city", "sector"]
FERRY = ["port", "sailing_date", "vehicle", "route_code", "account_no"]


@pytest.mark.parametrize(
    ("text", "tables", "described"),
    [
        # a layout: what each of most columns holds
        (
            "data/shipments.csv has one row per parcel (shipped_on is the day it left, "
            "sender_id the sender, weight_kg its weight, zone the delivery zone).",
            {"shipments": SHIPMENTS, "senders": SENDERS},
            {"shipment_id", "shipped_on", "sender_id", "weight_kg", "zone"},
        ),
        (
            "exercise users: the table gives each user's user_id, age, gender and occupation.",
            {"users": USERS},
            {"user_id", "age", "gender", "occupation"},
        ),
        # not stated: a formula names the few columns it combines
        (
            "The charge of a parcel is weight_kg × 2.5 plus 1 % of its declared_value.",
            {"shipments": SHIPMENTS},
            set(),
        ),
        # four of nine is not more than half: a formula over four terms stays one
        (
            "A booking's fare is passengers × passenger_fare + vehicle_fare, per booking_no.",
            {"bookings": [*FERRY, "passengers", "passenger_fare", "vehicle_fare", "booking_no"]},
            set(),
        ),
        # a three-column register is never told apart from a formula
        ("data/senders.csv gives the city and sector of each sender_id.", {"s": SENDERS}, set()),
        ("", {"shipments": SHIPMENTS}, set()),
    ],
)
def test_the_columns_a_text_names_when_it_describes_a_tables_layout(
    text: str, tables: dict[str, list[str]], described: set[str]
) -> None:
    assert described_columns(text, tables) == described


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("exercise chipotle: How many different items are sold?", {"item_name"}),
        ("exercise chipotle: What is the average revenue per order?", {"order_id"}),
        ("exercise chipotle: How many orders were made in the period?", {"order_id"}),
        # "how many items were ordered" counts units: it names no item_name
        ("exercise chipotle: How many items were ordered in total?", set()),
        # a verb, not a noun after a word of kinds or counts
        ("Which customers order the most?", set()),
        ("What is the mean quantity?", set()),
    ],
)
def test_a_column_named_by_its_own_words_after_a_word_of_kinds(
    question: str, named: set[str]
) -> None:
    assert noun_named_columns(question, CHIPO) == named


@pytest.mark.parametrize(
    ("question", "columns", "ids"),
    [
        ("Return a data frame with only two columns item_name and item_price", True, False),
        ("Select the column 'deaths' of the army", True, False),
        ("How many unique user IDs are there?", False, True),
        ("List the identifiers of the orders above 50", False, True),
        ("Sum the quantity of each order", False, False),
        ("What is the idea behind the columnist's ranking?", False, False),
    ],
)
def test_a_question_speaks_of_columns_or_of_ids(question: str, columns: bool, ids: bool) -> None:
    assert speaks_of_columns(question) == columns
    assert speaks_of_ids(question) == ids


@pytest.mark.parametrize(
    ("question", "subjects"),
    [
        (
            "exercise army #14: Select rows where df.deaths is greater than 500 or less than 50",
            [(500.0, "deaths"), (50.0, "deaths")],
        ),
        ("Select the regiments whose size is at least 1000", [(1000.0, "size")]),
        (
            "What are the rows with the veterans above 20 and deserters below 5?",
            [(20.0, "veterans"), (5.0, "deserters")],
        ),
        # the number is on what follows "with" / "have": not stated
        ("Which teams have more than 6 goals?", []),
        ("Regiments that have more than 5 battles", []),
        ("How many orders contain more than one Canned Soda?", []),
        ("What is the mean number of deaths?", []),
    ],
)
def test_the_column_a_threshold_is_about(question: str, subjects: list[tuple[float, str]]) -> None:
    got = threshold_subjects(question, [*ARMY, "teams", "goals"])
    assert [(s.threshold.value, s.column) for s in got] == subjects
