"""The revision statements of a turn's text: "Finance revised the COGS rate from 42% to 47%".

A statement is a verb of change (revise, change, update, correct, adjust, raise, lower,
increase, decrease, move or reduce with any ending, and "cut") and, at most 80 characters
after it with no ``.``, ``;`` or line break between, ``from X to Y``. X and Y
are plain numbers (digits, with a decimal part or not: no sign, thousands separator,
currency sign or number word); the two are a percentage when either is followed by ``%``
or "percent". A range ("sales from 2019 to 2021") has no verb of change: not read. A
sentence such as "sales moved from 10 to 20" reads like a revision too: the words do not
say which it is.

`QuestionSpec.revisions` reads revisions with a pattern of its own, which differs in its
verbs ("went", not "reduced") and its numbers (signs, separators, currency signs, number
words): each reading is kept as it was, for the results already computed with it.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

_NUMBER = r"(\d+(?:\.\d+)?)\s*(%|percent\b)?"
_CHANGE = re.compile(
    r"\b(?:revis\w*|chang\w*|updat\w*|correct\w*|adjust\w*|rais\w*|lower\w*|increas\w*|"
    r"decreas\w*|cut|mov\w*|reduc\w*)\b[^.;\n]{0,80}?\bfrom\s+" + _NUMBER + r"\s+to\s+" + _NUMBER,
    re.I,
)


class RevisionStatement(BaseModel):
    """A value changed from ``old`` to ``new``, as a text states it."""

    model_config = ConfigDict(frozen=True)

    old: float
    new: float
    percent: bool
    """Either value is written as a percentage (``42%``, ``42 percent``)."""
    text: str
    """The statement as written, from its verb to the new value and its ``%`` (or, when none
    follows, the white space after it: "moved it from 1 to 2 and …" gives "moved it from 1
    to 2 ")."""


def revision_statements(text: str) -> list[RevisionStatement]:
    """The revision statements of ``text`` (see the module), in text order; none (an empty
    list) when it states none: "Finance revised the rate from 42% to 47%." gives 42 → 47,
    a percentage."""
    return [
        RevisionStatement(
            old=float(m.group(1)),
            new=float(m.group(3)),
            percent=bool(m.group(2) or m.group(4)),
            text=m.group(0),
        )
        for m in _CHANGE.finditer(text or "")
    ]
