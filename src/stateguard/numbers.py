"""The one reading of numbers in text, shared by every layer (no stateguard imports).

* `scan` finds the numbers written in a text: ``1,234.5``, ``-3``, ``−0.25``
  (a Unicode minus), ``.5``, ``2e-3``, ``45%``. A number glued to a word or to a
  dot before it (``x1``, ``v1.2``'s ``2``) is not one.
* `dates` finds the ISO dates and months written in a text (``2025-01``, ``2025-01-15``),
  which `scan` reads as two or three numbers: a caller can name such a value whole.
* `parse_number` reads one whole value (a number, a numpy scalar, or a string such
  as ``"$1,234.50"`` or ``"Revenue: 12%"``) as a `Decimal`, or None.

The pattern pieces (`DIGITS`, `EXPONENT`, `CURRENCY`) let a caller that needs a
number inside a larger pattern (a ``label: value`` field) write it the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
"""Digits with optional thousands separators and an optional fraction."""
EXPONENT = r"(?:[eE][-+]?\d+)"
CURRENCY = "$€£¥"
MINUS = "−"
"""The Unicode minus sign, read as ``-``."""

_SCAN = re.compile(
    rf"(?<![\w.])(?P<sign>[-+{MINUS}]?)(?P<body>{DIGITS}|\.\d+)(?P<exp>{EXPONENT})?(?P<pct>%)?"
)
_LABEL = re.compile(r"^\s*[A-Za-z][\w ()/\-]{0,40}?:\s*(?=\S)")
_PLAIN = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$", re.IGNORECASE)
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?$")


@dataclass(frozen=True)
class Number:
    """One number as written in a text."""

    literal: str
    """The number without a ``+`` or ``%``, a Unicode minus as ``-`` (commas kept)."""
    value: float
    """The value written (``45%`` is 45.0)."""
    decimals: int
    """Digits after the decimal point (0 with an exponent)."""
    percent: bool
    start: int
    end: int

    @property
    def plain(self) -> str:
        """The literal without thousands separators."""
        return self.literal.replace(",", "")


def scan(text: str | None) -> list[Number]:
    """Every number written in ``text``, in order (see the module docstring)."""
    out: list[Number] = []
    for m in _SCAN.finditer(text or ""):
        sign = "-" if m["sign"] in ("-", MINUS) else ""
        literal = sign + m["body"] + (m["exp"] or "")
        try:
            value = float(literal.replace(",", ""))
        except ValueError:  # pragma: no cover - the pattern only matches floats
            continue
        body = m["body"]
        decimals = len(body.split(".", 1)[1]) if "." in body and not m["exp"] else 0
        out.append(Number(literal, value, decimals, bool(m["pct"]), m.start(), m.end()))
    return out


_DATE = re.compile(r"(?<![\w.\-])\d{4}-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?(?![\w\-])")
"""An ISO month or date: ``2025-01``, ``2025-01-15`` (not ``2025-13``, not ``1-2``)."""


@dataclass(frozen=True)
class Date:
    """An ISO month or date as written in a text."""

    text: str
    start: int
    end: int


def dates(text: str | None) -> list[Date]:
    """Every ISO month or date written in ``text``, in order."""
    return [Date(m.group(0), m.start(), m.end()) for m in _DATE.finditer(text or "")]


def values_in(text: str | None) -> list[float]:
    """The value of every number in ``text``; a percentage also as its fraction."""
    out: list[float] = []
    for n in scan(text):
        out.append(n.value)
        if n.percent:
            out.append(n.value / 100)
    return out


def parse_number(value: Any) -> Decimal | None:
    """Read a finite number from a value or a string like ``"$1,234.50"``; else None.

    A string may carry one leading ``label:``, currency signs, a percent sign and
    thousands separators; anything else in it makes it not a number. Booleans are not
    numbers.
    """
    if isinstance(value, bool) or value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            value = value.item()  # numpy scalar
        except (TypeError, ValueError):
            return None
        if isinstance(value, bool):
            return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if value == value and abs(value) != float("inf") else None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if not isinstance(value, str):
        return None
    text = _LABEL.sub("", value.strip(), count=1)
    text = re.sub(rf"[{re.escape(CURRENCY)}%\s]", "", text)
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    if not _PLAIN.match(text):
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


_VALUELESS = frozenset({"", "none", "nan", "null", "n/a", "na", "undefined", "unknown", "nat"})


_REMARK = re.compile(r"\s*\([^()]*\)\s*$")
"""A closing parenthesized remark: ``none (no progress was made)``, the form in which an
earlier turn that ended without an answer is shown to the model, which copies it."""


def is_valueless(text: str) -> bool:
    """Whether a value as written holds no value at all: ``None``, ``nan``, ``null``,
    ``N/A``… (quoted or not), or nothing, with or without a closing remark in parentheses
    (``none (no progress was made)``)."""
    value = text.strip().strip("`'\"").strip().lower()
    bare = _REMARK.sub("", value)
    return value in _VALUELESS or (bare != "" and bare in _VALUELESS)
