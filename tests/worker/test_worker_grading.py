"""Deterministic answer comparison: numbers, strings, booleans and mapping golds."""

from __future__ import annotations

import pytest

from stateguard.worker.grading import grade, numbers_in

CASES = [
    # answer, gold, tolerance, correct
    ("6", 6, None, True),
    ("The total is 1,234.56 dollars", 1234.56, None, True),
    ("The total is 1,234.56", 1234.5, None, False),
    ("about 1234.6", 1234.56, 0.05, True),
    ("about 1234.7", 1234.56, 0.05, False),
    ("51.24%", 51.24, 0.01, True),
    ("51.24%", 0.5124, 0.0001, True),
    ("-3e2", -300, None, True),
    ("np.float64(99209.19)", 99209.19, 0.01, True),
    ("no number here", 3, None, False),
    ("a third is 0.3333", 1 / 3, None, False),
    ("0.33333333", 1 / 3, None, True),
    ("North", "north", None, True),
    ("  The   best region is North. ", "North", None, True),
    ("Northeast", "North", None, False),
    ("'2024-06'", "2024-06", None, True),
    ("2024-07", "2024-06", None, False),
    ("Yes, it is.", True, None, True),
    ("No.", True, None, False),
    ("false", False, None, True),
    ("yes and no", True, None, False),
]


@pytest.mark.parametrize(("answer", "gold", "tolerance", "correct"), CASES)
def test_scalar_grades(answer: str, gold: object, tolerance: float | None, correct: bool) -> None:
    assert grade(answer, gold, tolerance).correct is correct


def test_no_gold_is_not_graded_and_no_answer_is_wrong() -> None:
    assert grade("6", None).correct is None
    assert grade(None, 6).correct is False
    assert grade(None, {"a": 1}).fields == {"a": False}


@pytest.mark.parametrize(
    "answer",
    [
        "orders: 1200, net_revenue: 209637.41",
        "Orders = 1,200; Net revenue = 209,637.41",
        '{"orders": 1200, "net_revenue": 209637.41}',
        "{'orders': 1200, 'net_revenue': np.float64(209637.41)}",
        "**orders**: 1200\n**net_revenue**: 209637.41",
        "orders: 1,200, net_revenue: 209,637.41",
    ],
)
def test_mapping_gold_field_by_field(answer: str) -> None:
    verdict = grade(answer, {"orders": 1200, "net_revenue": 209637.41}, 0.01)
    assert verdict.correct is True
    assert verdict.fields == {"orders": True, "net_revenue": True}


def test_mapping_gold_reports_the_wrong_field() -> None:
    verdict = grade(
        "Online: 48515.78, Retail: 36575.98, Partner: 17362.4",
        {"Online": 48515.78, "Retail": 33331.01, "Partner": 17362.4},
        0.01,
    )
    assert verdict.correct is False
    assert verdict.fields == {"Online": True, "Retail": False, "Partner": True}
    assert grade("region: West", {"region": "North"}).fields == {"region": False}
    grouped = grade(
        "Online: 48,515.78, Retail: 33,331.01, Partner: 17,362.40",
        {"Online": 48515.78, "Retail": 33331.01, "Partner": 17362.4},
        0.01,
    )
    assert grouped.correct is True


def test_numbers_in() -> None:
    assert numbers_in("a 1,234.5 b -2 c 47% d x9") == [1234.5, -2.0, 47.0, 0.47]
