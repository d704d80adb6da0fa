"""The form a question asks its answer in.

`answer_form` reads, from the question's English (its whitespace runs read as one space):

* a template in backticks with ``<placeholders>``, e.g.
  ``orders: <count>, net_revenue: <total rounded to 2 decimals>``: one field per
  ``label: <...>`` (or ``label = <...>``), in the template's order. A field is text when
  its placeholder names a name, region, channel, product, category, segment, label, city
  or country (lower-cased, as a whole word); else a count when it says "count", else a
  number. A number or count field has the decimal places its placeholder states
  (`stateguard.question.decimals`), else those the whole question states. A template
  with no ``label: <...>`` is no form at all (None), whatever else the question says;
* else one value: a month when the question writes ``YYYY-MM``; a count when it asks
  "how many"; nothing (None) when it asks for a name ("which", "who", "what is the
  name") and states no decimal places; else a number when it states decimal places or
  asks a numeric question ("decimal", "percentage", "percent", "fraction", "ratio",
  "average", "mean", "median", "total", "sum", "rate", "how much", "number of",
  "count"), with those places (None: not stated).

A question none of these fits asks for no form that can be read (None).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.question.spec import decimals

AnswerKind = Literal["number", "count", "month", "text"]

_TEMPLATE = re.compile(r"`([^`]*<[^`>]+>[^`]*)`")
"""A span between backticks holding a ``<placeholder>``."""
_FIELD = re.compile(r"([A-Za-z_][\w ]*?)\s*[:=]\s*<([^>]*)>")
"""``label: <placeholder>`` (or ``=``): the label (group 1) and the placeholder (group 2)."""
_TEXT_WORDS = re.compile(r"\b(name|region|channel|product|category|segment|label|city|country)\b")
"""Words of a (lower-cased) placeholder that ask for a name, not a number."""
_COUNT = re.compile(r"\bcount\b", re.I)
_MONTH = "YYYY-MM"
_HOW_MANY = re.compile(r"\bhow many\b", re.I)
_NAME_ASKED = re.compile(r"\b(which|who|what (?:is|was) the name)\b", re.I)
_NUMERIC_ASK = re.compile(
    r"\b(decimal|percentage|percent|fraction|ratio|average|mean|median|total|sum|rate|"
    r"how much|how many|number of|count)\b",
    re.I,
)


class FormField(BaseModel):
    """One value the answer must hold."""

    model_config = ConfigDict(frozen=True)

    label: str
    """The template's label, stripped; "" for the one value of a question without one."""
    kind: AnswerKind
    decimals: int | None = None
    """Decimal places a number or count is asked with; None: not stated (always, for a
    text or a month)."""


class AnswerForm(BaseModel):
    """The form a question asks its answer in (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    template: str | None = None
    """The template as written between the backticks; None: one value, without one."""
    fields: tuple[FormField, ...]
    """The template's fields in its order, or the one value asked; never empty."""


def answer_form(question: str) -> AnswerForm | None:
    """The form ``question`` asks its answer in (see the module docstring); None when it
    states none that can be read."""
    text = " ".join((question or "").split())
    overall = decimals(text)
    m = _TEMPLATE.search(text)
    if m is not None:
        fields = []
        for label, hole in _FIELD.findall(m.group(1)):
            kind: AnswerKind = "text" if _TEXT_WORDS.search(hole.lower()) else "number"
            if kind == "number" and _COUNT.search(hole):
                kind = "count"
            places = decimals(hole)
            fields.append(
                FormField(
                    label=label.strip(),
                    kind=kind,
                    decimals=None
                    if kind == "text"
                    else (places if places is not None else overall),
                )
            )
        return AnswerForm(template=m.group(1), fields=tuple(fields)) if fields else None
    if _MONTH in text:
        return AnswerForm(fields=(FormField(label="", kind="month"),))
    if _HOW_MANY.search(text):
        return AnswerForm(fields=(FormField(label="", kind="count"),))
    if _NAME_ASKED.search(text) and overall is None:
        return None
    if overall is not None or _NUMERIC_ASK.search(text):
        return AnswerForm(fields=(FormField(label="", kind="number", decimals=overall),))
    return None
