"""The parameters a context states: percentages and amounts with decimals, not whole
numbers, names or a revision's values."""

from __future__ import annotations

import pytest

from stateguard.question import stated_parameters


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        (
            "the platform keeps a commission of 12 % of that price. A cancelled session "
            "earns a flat cancellation fee of 3.00 and nothing else",
            ["12 %", "3.00"],
        ),
        ("cost of goods sold (COGS) is 42% of net revenue", ["42%"]),
        (
            "a base fee of 4.00, plus 0.90 per kg of weight_kg, plus an insurance surcharge "
            "of 2 % of its declared_value. A returned shipment is charged 6.50",
            ["4.00", "0.90", "2 %", "6.50"],
        ),
        ("a service fee of 8 percent of the ticket price", ["8 percent"]),
        # whole numbers, names, paths, thousands, a revision: no parameter
        ("data/sessions.csv holds the 1,700 sessions of 2025 (turn 5)", []),
        ("the columns tax_5 and q3.5x come from data/v2.0/file.csv", []),
        ("Finance revised the COGS rate from 42% to 47% of net revenue.", []),
        ("", []),
    ],
)
def test_stated_parameters(context: str, expected: list[str]) -> None:
    assert [p.text for p in stated_parameters(context)] == expected


def test_a_parameter_keeps_its_value_and_kind() -> None:
    (rate, fee) = stated_parameters("a commission of 12 % and a fee of 3.00")
    assert (rate.value, rate.percent) == (12.0, True)
    assert (fee.value, fee.percent) == (3.0, False)
