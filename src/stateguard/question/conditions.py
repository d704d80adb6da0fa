"""Where a question asks for the rows that meet a condition.

"Select the rows of the teams that start with G", "rows where deaths > 50": the question
asks for rows (records, entries, observations) followed, within a few words, by a word
that introduces a condition on them ("where", "whose", "that", "with", "starting"…).
"""

from __future__ import annotations

import re

_ROW_CONDITION = re.compile(
    r"\b(?:rows?|records?|entries|observations)\b[\w\s,'-]{0,30}?\b"
    r"(?:where|whose|that|which|with|starting|ending|containing|matching)\b",
    re.I,
)


def row_condition(question: str) -> str | None:
    """The words where ``question`` asks for rows that meet a condition ("rows of the teams
    that start with G", "rows where deaths > 50"), or None."""
    found = _ROW_CONDITION.search(question)
    return None if found is None else found.group()
