"""The things a question asks about: the one thing it wants a value per, the groups a share
or count is of, and the things a threshold counts.

- `asked_entity`: "What is the price of each item?", "revenue for every year" ask for one
  value per item, per year. Only the thing named right after *each*, *per* or *every* is
  read, and only when the question names one such thing: "per region per year" and "each
  regiment and company" name two.
- `asked_groups`: the word a share or count phrase is about ("Male" in "the Male
  percentage", "women" in "the share of women", "smokers" in "how many smokers").
- `counted_things`: a threshold whose number is followed by a thing ("more than one Canned
  Soda" counts sodas).
- `counted_by_total`: the things a question counts by a total of theirs against a
  threshold ("How many buyers have tickets whose total net is above 320?").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.question.spec import THRESHOLD, Threshold, threshold_spans
from stateguard.question.stems import stem, word_spans

_EACH = re.compile(
    r"\b(?:each|per|every)\s+(?:one\s+of\s+the\s+|of\s+the\s+)?([A-Za-z]+)"
    # a second thing ends the clause: "each regiment and company?", not "… and sort it"
    r"(?:\s+(?:and|or|&)\s+(?:each\s+|per\s+|every\s+)?([A-Za-z]+)(?=\s*(?:[?.,;:!]|$)))?",
    re.I,
)
_NOT_A_THING = frozenset(
    {"one", "other", "single", "cent", "capita", "time", "the", "a", "an", "its", "their"}
)
"""Words after each/per/every that name no thing ("per cent", "each one", "every time")."""

_COUNTED_BY_TOTAL = re.compile(
    r"\bhow\s+many\s+(?P<thing>[A-Za-z]+)\b[^?.;]*?\btotal\b(?P<rest>[^?.;]*)", re.I
)
"""How many THINGs …, then *total* in the same clause: the threshold must follow."""

_SHARE = r"(?:percentage|percent|proportion|share|ratio|rate|fraction)"
_SUBJECT = (
    re.compile(r"\b([A-Za-z]+)\s+" + _SHARE + r"\b", re.I),  # "the Male percentage"
    re.compile(
        r"\b(?:" + _SHARE + r"|number|count|how\s+many)\s+(?:of\s+)?(?:the\s+)?"
        r"(?:(?:unique|different|distinct)\s+)?([A-Za-z]+)",
        re.I,
    ),  # "the share of women", "how many smokers"
)
_NOT_A_GROUP = frozenset(
    {
        "the", "a", "an", "of", "what", "which", "is", "are", "its", "their", "total",
        "overall", "times", "rows", "records", "entries", "values", "columns", "cases",
        "observations", "missing", "unique", "different", "distinct",
    }
)  # fmt: skip
"""Words a share or count phrase can be about that name no group."""


def asked_entity(question: str) -> str | None:
    """The stemmed word of the one thing the question asks a value for, or None."""
    found = {stem(w) for m in _EACH.finditer(question) for w in m.groups() if w}
    found -= _NOT_A_THING
    return found.pop() if len(found) == 1 else None


def asked_groups(question: str) -> list[str]:
    """The words a share or count phrase of ``question`` is about ("Male" in "the Male
    percentage", "women" in "the share of women"), as written, in phrase order."""
    out = []
    for pattern in _SUBJECT:
        for m in pattern.finditer(question):
            word = m.group(1)
            if word.lower() not in _NOT_A_GROUP and not re.fullmatch(_SHARE, word, re.I):
                out.append(word)
    return out


def counted_things(question: str, things: Sequence[list[str]]) -> list[tuple[Threshold, str]]:
    """Each threshold of ``question`` whose number is followed by one of ``things`` (each
    the non-empty stemmed words of a thing, as `stateguard.question.stems.words` gives
    them; the first that follows wins), with the thing's words as the question writes
    them: "more than one Canned Soda" and ``["canned", "soda"]`` → "Canned Soda"."""
    out = []
    for t in threshold_spans(question):
        m = THRESHOLD.match(question, t.start)
        if m is None:
            continue
        after = [s for s in word_spans(question) if s[0] >= m.end()]
        for ws in things:
            head = after[: len(ws)]
            if [s[2] for s in head] == ws:
                out.append((t, question[head[0][0] : head[-1][1]]))
                break
    return out


class TotalThreshold(BaseModel):
    """Things counted by a total of theirs against a threshold."""

    model_config = ConfigDict(frozen=True)

    thing: str
    """The stemmed word of the things counted (``buyer`` for "How many buyers …")."""
    threshold: Threshold


def counted_by_total(question: str) -> TotalThreshold | None:
    """The things ``question`` counts by a total of each, compared with a threshold: "How
    many buyers have tickets whose total 2025 net is above 320?" counts buyers whose
    tickets' net adds up to more than 320 (not tickets above 320). Read only when *how
    many THING* is followed, in one clause, by *total* and then by exactly one threshold;
    else None (not stated): "How many cars have a price above 20000?" has no total, and
    "the total number of …" is a count, not a total of each."""
    m = _COUNTED_BY_TOTAL.search(question)
    if m is None or re.match(r"\s+number\b", m.group("rest")):
        return None
    after = [t for t in threshold_spans(question) if m.start("rest") <= t.start < m.end("rest")]
    if len(after) != 1:
        return None
    thing = stem(m.group("thing"))
    if thing in _NOT_A_GROUP:
        return None
    return TotalThreshold(thing=thing, threshold=after[0])
