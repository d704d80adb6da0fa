"""Deterministic comparison of an answer text with a task's gold answer.

* Numbers: every number in the answer is a candidate (``1,234.5``, ``-3e2``; a
  number followed by ``%`` also counts divided by 100); the answer is correct if
  one candidate is within ``tolerance`` (absolute) of the gold value, or, without
  a tolerance, within 1e-6 relative (1e-9 absolute near zero).
* Strings: compared case- and whitespace-insensitively, trailing punctuation
  ignored; the gold may also appear as a whole phrase inside the answer.
* Booleans: ``true/yes`` or ``false/no`` (whole words), and not the opposite.
* Mappings: each field is looked up in the answer, either as a JSON object or as
  ``key: value`` / ``key = value`` pairs (keys case-insensitive, ``_`` and spaces
  equivalent), and compared with the rules above; correct iff every field is.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from stateguard.numbers import values_in

# A number with thousands separators, whose commas must not end a `key: value` field.
_GROUPED = r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d|,\d{3})"
_TRUE = {"true", "yes"}
_FALSE = {"false", "no"}


class Grade(BaseModel):
    """The verdict on one answer; `fields` is set for mapping golds."""

    model_config = ConfigDict(frozen=True)

    correct: bool | None
    """None when there is no gold answer."""
    fields: dict[str, bool] | None = None


def numbers_in(text: str) -> list[float]:
    """Every number in ``text`` (a percentage also as its fraction)."""
    return values_in(text)


def _close(value: float, gold: float, tolerance: float | None) -> bool:
    if tolerance is not None:
        return abs(value - gold) <= tolerance + 1e-12
    return math.isclose(value, gold, rel_tol=1e-6, abs_tol=1e-9)


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split()).strip(" .,;:!\"'`")


def scalar_matches(answer: str, gold: Any, tolerance: float | None = None) -> bool:
    """Whether ``answer`` (text) matches one scalar gold value."""
    if isinstance(gold, bool):
        words = set(re.findall(r"[a-z]+", answer.lower()))
        yes, no = bool(words & _TRUE), bool(words & _FALSE)
        return (yes and not no) if gold else (no and not yes)
    if isinstance(gold, int | float):
        return any(_close(v, float(gold), tolerance) for v in numbers_in(answer))
    got, want = _norm(answer), _norm(gold)
    if not want:
        return not got
    if got == want:
        return True
    return re.search(rf"(?<!\w){re.escape(want)}(?!\w)", got) is not None


def _norm_key(key: str) -> str:
    return re.sub(r"[\s_\-]+", " ", key.strip().lower())


def _json_object(answer: str) -> dict[str, Any] | None:
    start, end = answer.find("{"), answer.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(answer[start : end + 1])
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return None
    return data if isinstance(data, dict) else None


def _field_value(answer: str, key: str, obj: dict[str, Any] | None) -> str | None:
    if obj is not None:
        for k, v in obj.items():
            if _norm_key(str(k)) == _norm_key(key):
                return json.dumps(v) if not isinstance(v, str) else v
    words = [re.escape(w) for w in _norm_key(key).split()]
    pattern = r"[\s_\-]*".join(words)
    m = re.search(
        rf"(?<!\w)[\"'`*]*{pattern}[\"'`*]*\s*[:=]\s*({_GROUPED}|[^,;\n}}]+)", answer, flags=re.I
    )
    return m.group(1).strip() if m else None


def grade(answer: str | None, gold: Any, tolerance: float | None = None) -> Grade:
    """Compare an answer with the gold answer (see the module docstring for the rules)."""
    if gold is None:
        return Grade(correct=None)
    if isinstance(gold, dict):
        if answer is None:
            return Grade(correct=False, fields={k: False for k in gold})
        obj = _json_object(answer)
        fields: dict[str, bool] = {}
        for key, want in gold.items():
            value = _field_value(answer, key, obj)
            fields[key] = value is not None and scalar_matches(value, want, tolerance)
        return Grade(correct=all(fields.values()), fields=fields)
    if answer is None:
        return Grade(correct=False)
    return Grade(correct=scalar_matches(answer, gold, tolerance))
