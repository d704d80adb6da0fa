"""`stateguard.numbers`: the one reading of numbers in text, as tables."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from stateguard.numbers import is_valueless, parse_number, scan, values_in


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # (literal, value, decimals, percent) of every number found
        ("total 1,234.5 units", [("1,234.5", 1234.5, 1, False)]),
        ("-2 and +3", [("-2", -2.0, 0, False), ("3", 3.0, 0, False)]),
        ("−0.25 (Unicode minus)", [("-0.25", -0.25, 2, False)]),
        ("47% of them", [("47", 47.0, 0, True)]),
        ("12.50%", [("12.50", 12.5, 2, True)]),
        (".5 left", [(".5", 0.5, 1, False)]),
        ("2.5e-3 s", [("2.5e-3", 0.0025, 0, False)]),
        ("x9 v2 a1b", []),  # glued to a word
        ("v1.2", []),  # the 2 follows a dot
        ("1,2345", [("1,234", 1234.0, 0, False)]),  # a group must be three digits
        ("2024-01", [("2024", 2024.0, 0, False), ("01", 1.0, 0, False)]),  # a dash after digits
        ("", []),
        (None, []),
    ],
)
def test_scan(text: str | None, expected: list[tuple[str, float, int, bool]]) -> None:
    assert [(n.literal, n.value, n.decimals, n.percent) for n in scan(text)] == expected


def test_scan_spans_and_plain_literal() -> None:
    (n,) = scan("cost: $1,234.50.")
    assert n.plain == "1234.50" and "cost: $1,234.50."[n.start : n.end] == "1,234.50"


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("a 1,234.5 b -2 c 47% d x9", [1234.5, -2.0, 47.0, 0.47]),
        ("no numbers", []),
        ("50% and 0.5", [50.0, 0.5, 0.5]),
    ],
)
def test_values_in(text: str, values: list[float]) -> None:
    assert values_in(text) == values


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, Decimal(3)),
        (0.1, Decimal("0.1")),
        (np.float64(2.5), Decimal("2.5")),
        (np.int64(7), Decimal(7)),
        ("$1,234.50", Decimal("1234.50")),
        ("Revenue: 12%", Decimal(12)),
        ("-€3", Decimal(-3)),
        ("1e3", Decimal("1e3")),
        (" 42 ", Decimal(42)),
        ("1,23", None),  # not a thousands group
        ("12 apples", None),
        ("nan", None),
        (float("inf"), None),
        (True, None),
        (np.bool_(True), None),
        (None, None),
        ([1], None),
        (Decimal("NaN"), None),
    ],
)
def test_parse_number(value: object, expected: Decimal | None) -> None:
    assert parse_number(value) == expected


def test_iso_months_and_dates_are_found_whole() -> None:
    from stateguard.numbers import dates

    text = "peak 2025-01, then 2025-02-28; not 2025-13, 1-2, x2025-01 or 2025-01-32"
    assert [d.text for d in dates(text)] == ["2025-01", "2025-02-28"]
    (d,) = dates("month: 2024-12")
    assert "month: 2024-12"[d.start : d.end] == "2024-12"


@pytest.mark.parametrize(
    ("text", "valueless"),
    [
        ("None", True),
        ("`nan`", True),
        ("", True),
        ("N/A", True),
        # an earlier turn's missing answer as the prompt shows it, copied as an answer
        ("none (no progress was made)", True),
        ("N/A (the step budget ran out)", True),
        # near misses: a value with a remark, a remark alone, words that answer "how many"
        ("3 (rounded)", False),
        ("(none)", False),
        ("none of them", False),
        ("North (none of the others)", False),
    ],
)
def test_a_value_that_holds_nothing(text: str, valueless: bool) -> None:
    assert is_valueless(text) is valueless
