"""The fields of an answer a question names (`stateguard.question.fields`): LongDS
questions, whose gold answer is an object of fields, and our own; "not stated" (no field
named) is checked as carefully as what is stated."""

from __future__ import annotations

import pytest

from stateguard.question import field_tokens, named_fields


@pytest.mark.parametrize(
    ("name", "tokens"),
    [
        ("total_revenue", {"total", "revenue"}),
        ("Total Revenue", {"total", "revenue"}),
        ("topCustomer_2024", {"top", "customer", "2024"}),
        ("q1Sales", {"q1", "sales"}),  # a word keeps its digits; not stemmed here
        ("avg-price (USD)", {"avg", "price", "usd"}),
        ("n_orders", {"n", "orders"}),
        ("", set()),
        ("__", set()),
    ],
)
def test_a_field_name_splits_into_lower_case_words(name: str, tokens: set[str]) -> None:
    assert field_tokens(name) == tokens


@pytest.mark.parametrize(
    ("question", "fields", "named"),
    [
        (
            'What are the total revenue and the number of orders? Answer as {"total_revenue":'
            ' ..., "n_orders": ...}.',
            ["total_revenue", "n_orders", "avg_order_value"],
            ["total_revenue", "n_orders"],
        ),
        # in the order given, not the question's; a plural names its singular
        (
            "Give the mean age and the median BMI of the patients.",
            ["mean_age", "median_bmi", "patient_count"],
            ["mean_age", "median_bmi", "patient_count"],
        ),
        (
            "Which region has the highest revenue, and what is that revenue?",
            ["region", "revenue", "rank"],
            ["region", "revenue"],
        ),
        # "count" need not be written; "id" must be
        (
            "How many visits did each patient make?",
            ["patientId", "visitCount", "visit_date"],
            ["visitCount"],
        ),
        ("List the top 3 customers by sales.", ["topCustomers", "sales_total"], ["topCustomers"]),
        (
            "How many orders per region?",
            ["orders_per_region", "region_orders"],
            ["orders_per_region", "region_orders"],
        ),
        # a final "s" only: "status" and "classes" name themselves
        ("What is the status of order 17?", ["status", "order_id"], ["status"]),
        ("Compare the classes of the passengers.", ["classes", "class"], ["classes"]),
        # not stated: no field named, or one made only of words that need not be written
        ("Summarize the data.", ["total_revenue", "n_orders"], []),
        ("What is the number of orders?", ["num_count", "n", "count_of"], []),
        ("", ["total_revenue"], []),
        ("What is the total revenue?", [], []),
    ],
)
def test_the_fields_a_question_names(question: str, fields: list[str], named: list[str]) -> None:
    assert named_fields(question, fields) == named
