"""Unit tests of output truncation and ANSI stripping (no kernel)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stateguard.kernel._text import CappedText, strip_ansi, truncate_middle


def test_short_text_is_unchanged() -> None:
    assert truncate_middle("hello", 10) == "hello"


def test_long_text_keeps_head_and_tail_with_marker() -> None:
    text = "a" * 50 + "b" * 50
    out = truncate_middle(text, 20)
    assert out.startswith("a" * 10)
    assert out.endswith("b" * 10)
    assert "...[80 chars truncated]..." in out


@given(
    chunks=st.lists(st.text(max_size=40), max_size=30),
    max_chars=st.integers(min_value=1, max_value=120),
)
def test_capped_text_matches_truncate_middle(chunks: list[str], max_chars: int) -> None:
    capped = CappedText(max_chars)
    for chunk in chunks:
        capped.write(chunk)
    assert capped.getvalue() == truncate_middle("".join(chunks), max_chars)


def test_strip_ansi_removes_colour_codes() -> None:
    coloured = "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero\x1b[1;32m"
    assert strip_ansi(coloured) == "ZeroDivisionError: division by zero"
