"""Is every number of an answer one the session showed? A deterministic check.

A small model fills the answer format with numbers it never computed (often the
ones of an example). Before an answer goes to review, each number in it must
appear in something the model was shown: an observation of the session, the
question or its context. A number counts as shown when its text appears there, or
when a shown number rounds to it at the answer's precision (also as a percentage
of a shown fraction). Integers below 10 are not checked (ordinals, counts of
decimals, months).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from stateguard.worker.grading import numbers_in

_TOKEN = re.compile(r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_SMALL = 10


def _matches(token: str, value: float, shown: list[float]) -> bool:
    decimals = len(token.split(".", 1)[1]) if "." in token else 0
    half = 0.5 * 10**-decimals + 1e-9
    for x in shown:
        for candidate in (x, x * 100):
            if abs(candidate - value) <= half:
                return True
    return False


def unseen_numbers(answer: str, shown_texts: Iterable[str]) -> list[str]:
    """The numbers of ``answer`` that no shown text holds (see the module docstring)."""
    texts = list(shown_texts)
    shown: list[float] | None = None
    unseen: list[str] = []
    for m in _TOKEN.finditer(answer):
        token = m.group(0).lstrip("+").replace("−", "-")
        plain = token.replace(",", "")
        try:
            value = float(plain)
        except ValueError:
            continue
        if value.is_integer() and abs(value) < _SMALL:
            continue
        if any(token in t or plain in t for t in texts):
            continue
        if shown is None:
            shown = [x for t in texts for x in numbers_in(t)]
        if not _matches(plain, value, shown):
            unseen.append(token)
    return list(dict.fromkeys(unseen))
