"""Small HTML formatting helpers shared by the report sections.

Invariant: every helper returning markup escapes all text it is given; callers
only concatenate helper output and literal markup.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any

DASH = '<span class="dash">—</span>'
"""Markup shown for an unknown value."""

_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


def esc(text: object) -> str:
    """HTML-escape ``text`` (quotes included, so it is safe in attributes too)."""
    return escape(str(text), quote=True)


def clip(text: str, limit: int) -> str:
    """Collapse whitespace and shorten to ``limit`` characters with ``…`` (not escaped)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)].rstrip() + "…"


def value(obj: Any) -> str:
    """Escaped display text of an arbitrary JSON-ish value; ``None`` is a dash."""
    if obj is None:
        return DASH
    if isinstance(obj, str):
        return esc(obj)
    try:
        return esc(json.dumps(obj, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return esc(repr(obj))


def count(n: int | None) -> str:
    """An integer with thousands separators, or a dash."""
    return DASH if n is None else f"{n:,}"


def seconds(s: float | None) -> str:
    """A duration: ``3.2 s``, ``4 min 05 s``; a dash when unknown."""
    if s is None:
        return DASH
    if s < 60:
        return f"{s:.1f} s"
    minutes, rest = divmod(round(s), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def head(text: str, max_lines: int = 8, max_chars: int = 1200) -> tuple[str, bool]:
    """First lines of ``text`` (not escaped) and whether anything was cut."""
    lines = text.splitlines()
    cut = "\n".join(lines[:max_lines])
    if len(cut) > max_chars:
        cut = cut[:max_chars]
    return cut, cut != text.rstrip("\n")


def png_data_uri(data: Any) -> str | None:
    """``data:image/png;base64,…`` for a base64 PNG payload, or None if it is not one."""
    if not isinstance(data, str):
        return None
    compact = "".join(data.split())
    if not compact or not _BASE64.match(compact):
        return None
    return f"data:image/png;base64,{compact}"


def state_link(state_id: str) -> str:
    """Anchor to a state's card."""
    return f'<a href="#state-{esc(state_id)}">{esc(state_id)}</a>'
