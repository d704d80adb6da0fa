"""Machine-checkable output requirements of a question: decimal places, whole numbers."""

from __future__ import annotations

import pytest

from stateguard.manager.evidence import decimal_requirement, output_requirements


@pytest.mark.parametrize(
    ("question", "places"),
    [
        ("Round to two decimal places.", 2),
        ("rounded to 3 decimals", 3),
        ("What is the mean age of users? (rounded to integer)", 0),
        ("Calculate the mean, rounded to the nearest integer", 0),
        ("Round it to the nearest whole number.", 0),
        ("round down to an integer", 0),
        # near misses: an integer mentioned without rounding, no requirement at all
        ("Convert the id column to integer.", None),
        ("What is the integer part of the mean?", None),
        ("What is the mean age?", None),
    ],
)
def test_decimal_requirement(question: str, places: int | None) -> None:
    assert decimal_requirement(question) == places


def test_a_whole_number_requirement_flags_a_fraction_and_not_an_integer() -> None:
    q = "Calculate the mean Yellow Cards given per Team, rounded to the nearest integer"
    (found,) = output_requirements(q, "7.4375")
    assert found.message == "the question asks for a whole number but the answer gives 7.4375"
    assert output_requirements(q, "7") == output_requirements(q, "7.0") == []
