"""Which rows the question asks a join to keep, read from its wording.

A merge that states no ``how`` gets pandas' default inner join. Whether the rows it
drops are a silent error depends on what was asked, and only the question says that:

- ``"all"``: the question asks to keep unmatched rows ("merge all values…", "for every
  year", "where available", "even if", "an outer / left / full join");
- ``"matching"``: it asks for the rows both sides share ("only the data that has the
  same id on both", "an inner join", "rows present in both");
- ``"unstated"``: it names no such choice ("merge a and b along subject_id").

When both kinds of wording occur, ``"all"`` wins: "all values, with matching records
from both sides where available" is an outer join. This reading is broader than
`QuestionSpec.join_rows`, which says "not stated" when both occur;
`stateguard.audit.joinpolicy` reads this one.
"""

from __future__ import annotations

import re
from typing import Literal

RowsAsked = Literal["all", "matching", "unstated"]

_ROWS = r"(?:rows?|records?|values?|entries|entry|data|observations?|items?|keys?|ids?|subjects?)"

_ALL = re.compile(
    r"\b(?:"
    rf"all\s+(?:the\s+|of\s+the\s+)?(?:\w+\s+)?{_ROWS}"
    r"|every\s+\w+"
    r"|keep(?:s|ing)?\s+(?:all|every|each|the\s+unmatched|unmatched|the\s+rest|missing)"
    r"|where\s+(?:available|possible)|if\s+available|even\s+(?:if|when|where|those|without)"
    r"|unmatched|non-?matching|without\s+(?:losing|dropping)"
    r"|no\s+(?:\w+\s+)?(?:is|are|gets?)\s+(?:lost|dropped)"
    r"|(?:outer|full|left|right)(?:\s+outer)?[\s-]+(?:join|merge)"
    r"|how\s*=\s*['\"](?:outer|left|right)['\"]"
    r")",
    re.IGNORECASE,
)

_MATCHING = re.compile(
    r"\b(?:"
    r"inner[\s-]+(?:join|merge)|how\s*=\s*['\"]inner['\"]|intersection"
    r"|(?:present|found|exist\w*|appear\w*|shared|common|available)\s+(?:in|to|on)\s+both"
    r"|(?:on|in|from)\s+both(?:\s+sides|\s+tables|\s+data\s*frames)?"
    r"|only\s+(?:the\s+)?(?:\w+\s+)?(?:that|which|with|whose|where|matching|common)"
    r"|matching\s+(?:rows|records|keys|ids?)\s+only"
    r")",
    re.IGNORECASE,
)


def rows_asked(question: str | None) -> RowsAsked | None:
    """What the question asks a join to keep; None when there is no question."""
    if question is None:
        return None
    if _ALL.search(question):
        return "all"
    if _MATCHING.search(question):
        return "matching"
    return "unstated"
