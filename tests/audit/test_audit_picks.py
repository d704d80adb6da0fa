"""Positional picks a cell shows (`stateguard.audit.picks`), read from code alone."""

from __future__ import annotations

import pytest

from stateguard.audit.picks import shown_picks


@pytest.mark.parametrize(
    ("src", "found"),
    [
        ("print(s.iloc[0])", ["s.iloc[0]"]),
        ('print(f"pct: {pct.iloc[0]:.2f}")', ["pct.iloc[0]"]),
        ("s.iat[-1]", ["s.iat[-1]"]),
        ("x = s.values[0]\ny = 2\nprint(x, y)", ["s.values[0]"]),
        ("a = s.iloc[0]\nb = u.iloc[-1]\nprint(a)\nprint(b)", ["s.iloc[0]", "u.iloc[-1]"]),
    ],
)
def test_a_shown_first_or_last_element_of_a_name_is_found(src: str, found: list[str]) -> None:
    assert [p.expression for p in shown_picks(src)] == found


@pytest.mark.parametrize(
    "src",
    [
        "x = s.iloc[0]",  # bound, never shown
        "x = s.iloc[0]\nx = 3\nprint(x)",  # rebound before it is shown
        "print(s.iloc[2])",  # a middle element: a deliberate choice
        "print(s.iloc[0:3])",  # a slice
        "print(df['x'].iloc[0])",  # not a plain name
        "print(s.loc[0])",  # a label
        "print(s.iloc[0]",  # does not parse
    ],
)
def test_near_misses_are_not_picks(src: str) -> None:
    assert shown_picks(src) == []
