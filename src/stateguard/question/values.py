"""Where a question writes a given value, and whether it excludes it there.

The value comes from elsewhere (a constant of the code, ``'Dragoons'`` or ``2015``); this
module only finds it in the question's words: as a whole word (`value_mentions`, each
with whether a negation shortly before excludes it: "not named Dragoons", "except
2015"), or as a whole number (`names_number`).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

_NEGATION = re.compile(
    r"\b(?:not|except|excluding|exclude|other\s+than|besides|without|apart\s+from|"
    r"aside\s+from|non|isn't|aren't|wasn't|weren't|doesn't|don't|didn't)\b[\w\s\-\"'`“‘]{0,25}$",
    re.I,
)
"""A negation ending at most a few words before a value: the value is excluded."""


class Mention(BaseModel):
    """One place where the question writes a value."""

    model_config = ConfigDict(frozen=True)

    start: int
    """Where the value starts in the text."""
    negated: bool
    """A negation stands shortly before it ("not named …", "excluding …", "other than …")."""


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _bounded(written: str) -> str:
    """A pattern for ``written`` as a whole word; for a number, also not a part of a
    longer one (``0`` in ``0.90``, ``5`` in ``1.5``). A full stop after it ends a sentence
    ("above 500."), so it is no part of the number."""
    if _NUMBER.fullmatch(written):
        return rf"(?<![\w.]){re.escape(written)}(?!\w|\.\d)"
    return r"(?<!\w)" + re.escape(written) + r"(?!\w)"


def value_mentions(question: str, value: str) -> list[Mention]:
    """Every place ``question`` writes ``value`` as a whole word, any case, in text order
    (a number only as a whole number)."""
    return [
        Mention(start=m.start(), negated=bool(_NEGATION.search(question[: m.start()])))
        for m in re.finditer(_bounded(value), question, re.I)
    ]


def names_number(question: str, written: str) -> bool:
    """Whether ``question`` writes the number ``written`` (``1``, ``2.5``) as a whole number:
    not a part of another (``12``, ``1.5``, ``x1``), and at the end of a sentence too
    ("above 500.")."""
    return re.search(rf"(?<![\w.]){re.escape(written)}(?!\w|\.\d)", question) is not None
