"""The parameters a turn's context states for a model: "a commission of 12 % of that
price", "a flat cancellation fee of 3.00".

A parameter is a number written as a percentage (``12 %``, ``12%``, ``12 percent``) or
with decimals (``3.00``, ``0.90``): the rates and amounts of a stated model. A plain
whole number (``2025``, "1,700 sessions", "turn 5") is not one: a context uses those for
years, counts and references. A number inside a revision statement ("from 12 % to 15 %")
is not one either: its old value is what must no longer be used, and its new one is
read as a revision (`stateguard.question.revisions`). A number joined to a word (a
column such as ``tax_5``, a file ``data/q3.csv``) is part of a name, not a parameter.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from stateguard.question.revisions import revision_statements

_PARAMETER = re.compile(
    r"(?<![\w.,\-/])(\d+(?:\.(\d+))?)(?![\w.,\-/]*[A-Za-z_/])(?!,\d)(\s*(?:%|percent\b))?"
)
"""A number not joined to a word, a path or a thousands separator, with its ``%``."""


class Parameter(BaseModel):
    """A number the context states for a model, as written."""

    model_config = ConfigDict(frozen=True)

    value: float
    percent: bool
    text: str
    """The number as written, with its ``%`` when it has one (``12 %``, ``3.00``)."""


def stated_parameters(context: str) -> list[Parameter]:
    """The parameters ``context`` states (see the module), in text order, each once."""
    text = context or ""
    inside = [
        (m.start(), m.end())
        for s in revision_statements(text)
        for m in re.finditer(re.escape(s.text), text)
    ]
    out: list[Parameter] = []
    for m in _PARAMETER.finditer(text):
        if any(a <= m.start() < b for a, b in inside):
            continue
        percent = bool(m.group(3))
        if not percent and m.group(2) is None:
            continue  # a whole number: a year, a count, a reference
        p = Parameter(value=float(m.group(1)), percent=percent, text=m.group(0).strip())
        if p not in out:
            out.append(p)
    return out
