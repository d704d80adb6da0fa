"""The flat amounts a task's text states: "a flat disposal charge of 1.20", "a fixed
booking fee of 2.50".

A flat (or fixed) amount is charged once for each row it applies to, whatever that row
holds: its total over some rows is the number of those rows times the amount. An amount
stated per something ("a flat fee of 2.50 per night") is a rate of that something, not
a flat amount of the row, and is left out, as is a percentage.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from stateguard.question.sentences import sentences

_FLAT = re.compile(
    r"\b(?P<kind>flat|fixed)\s+(?P<term>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,3}?)\s+of\s+"
    r"(?:[£$€]\s*)?(?P<amount>\d+(?:\.\d+)?)(?!\d|\.\d|\s*(?:%|percent\b))"
    r"(?P<per>\s+(?:per|a|an|for\s+each|for\s+every|each)\b)?",
    re.I,
)


class FlatAmount(BaseModel):
    """An amount the text states as flat, as written."""

    model_config = ConfigDict(frozen=True)

    term: str
    """What the amount is, with its adjective: ``flat disposal charge``."""
    value: float
    text: str
    """The number as written (``1.20``)."""
    sentence: str


def flat_amounts(text: str) -> list[FlatAmount]:
    """The flat amounts ``text`` states (see the module), in order, each term once."""
    out: dict[str, FlatAmount] = {}
    for sentence in sentences(text or ""):
        for m in _FLAT.finditer(sentence):
            if m.group("per"):
                continue  # "a flat fee of 2.50 per night" is a rate of the nights
            term = f"{m.group('kind').lower()} {' '.join(m.group('term').lower().split())}"
            if term not in out:
                out[term] = FlatAmount(
                    term=term,
                    value=float(m.group("amount")),
                    text=m.group("amount"),
                    sentence=sentence.strip(),
                )
    return list(out.values())
