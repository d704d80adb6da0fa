"""A flat amount the task states, multiplied by a per-row quantity."""

from __future__ import annotations

import pytest

from stateguard.audit.flat import once_per_row, scaled_amounts
from stateguard.question import flat_amounts


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "A returned sale carries no commission; for it the grower pays a flat disposal "
            "charge of 1.20 instead.",
            [("flat disposal charge", 1.2, "1.20")],
        ),
        ("Each booking pays a fixed booking fee of £2.50.", [("fixed booking fee", 2.5, "2.50")]),
        # a rate of something, a percentage, or no flat amount
        ("Guests pay a flat cleaning fee of 2.50 per night.", []),
        ("The platform keeps a flat commission of 12 % of the price.", []),
        ("A fee of 3.00 is charged on each cancellation.", []),
        ("", []),
    ],
)
def test_the_flat_amounts_a_text_states(text: str, found: list[tuple[str, float, str]]) -> None:
    assert [(a.term, a.value, a.text) for a in flat_amounts(text)] == found


@pytest.mark.parametrize(
    ("code", "found"),
    [
        # a per-row quantity times the flat amount
        (
            "r = s[s['settlement'] == 'returned']\nc = (r['trays'] * r['tray_price'] * 1.20).sum()",
            [(2, "r['trays'] * r['tray_price']", (("r", "trays"), ("r", "tray_price")))],
        ),
        ("x = 1.2 * s.trays", [(1, "s.trays", (("s", "trays"),))]),
        # a count, a condition, a reduction, another number: no per-row quantity
        ("x = len(r) * 1.20", []),
        ("x = r['trays'].count() * 1.20", []),
        ("x = r.shape[0] * 1.2", []),
        ("x = (s['settlement'] == 'returned') * 1.20", []),
        ("x = r['trays'].sum() * 1.20", []),
        ("x = r['trays'] * 0.06", []),
        ("x = r['trays'] +", []),
    ],
)
def test_a_flat_amount_multiplied_by_a_per_row_quantity(
    code: str, found: list[tuple[int, str, tuple[tuple[str, str], ...]]]
) -> None:
    assert [(s.line, s.expression, s.columns) for s in scaled_amounts(code, [1.2])] == found


def test_the_amount_once_per_row_keeps_the_quantitys_rows() -> None:
    code = "r = s[s['x'] == 'returned']\nprint((r['trays'] * r['tray_price'] * 1.20).sum())"
    found = scaled_amounts(code, [1.20])[0]
    again = once_per_row(code, found)
    assert again is not None
    assert "(r['trays'] * r['tray_price'] * 0 + 1.2).sum()" in again
    assert again.splitlines()[0] == "r = s[s['x'] == 'returned']"


@pytest.mark.parametrize(
    "code",
    [
        "t['fee'] = t['fee'] * 1.20",  # reads what it writes: a second run starts elsewhere
        "total = 0\ntotal += (t['kg'] * 1.20).sum()",
    ],
)
def test_a_cell_that_updates_a_value_from_itself_is_not_run_again(code: str) -> None:
    found = scaled_amounts(code, [1.20])
    assert found and once_per_row(code, found[0]) is None
