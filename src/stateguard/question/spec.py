"""`QuestionSpec`: what the code needs from a question's English, read once.

Each field says "not stated" explicitly (None, or an empty tuple for lists). A phrase that
could be read two ways gives "not stated", never a guess: a check built on a guess would
punish a correct step for the reader's mistake.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.numbers import parse_number
from stateguard.question import vocabulary as V

Direction = Literal["up", "down"]
Statistic = Literal["count", "sum", "mean", "median", "share", "extreme", "order"]
JoinRows = Literal["all", "matched"]

_FLIP: dict[str, Direction] = {"up": "down", "down": "up"}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Threshold(_Frozen):
    """A "more than N" / "less than N" of the question."""

    value: float
    direction: Direction
    """As written: "up" for "more than N", "down" for "less than N"."""
    percent: bool = False
    start: int = 0
    """Where the phrase starts in the text."""
    keeps: Direction | None = None
    """The side of N the rows the question keeps (or asks about) lie on: `direction`, or
    its opposite when the phrase describes rows to remove ("removing cars with more than 3
    …" keeps "down"); None when the sentence both keeps and removes rows (not stated)."""

    @property
    def words(self) -> str:
        """``more than 6`` / ``less than 6``."""
        return f"{'more' if self.direction == 'up' else 'less'} than {self.value:g}"


class Revision(_Frozen):
    """A stated change of a value: "the commission was revised from 12 % to 15 %"."""

    old: float
    new: float
    percent: bool = False


class QuestionSpec(_Frozen):
    """What a question asks for, as far as its English states it."""

    text: str
    decimals: int | None = None
    """Decimal places the answer must be rounded to; None: not stated."""
    thresholds: tuple[Threshold, ...] = ()
    statistic: Statistic | None = None
    """The one statistic asked for; None when none or several are named."""
    quoted: tuple[str, ...] = ()
    """Values the question quotes ('Veggie Salad Bowl')."""
    years: tuple[int, ...] = ()
    """Years the question keeps rows to ("in 2015", "in the year of 2015")."""
    columns: tuple[str, ...] = ()
    """Of the columns given to `parse`, those the question names (whole words)."""
    join_rows: JoinRows | None = None
    """Which rows a join should keep: "all" (those without a match too), "matched" (only
    those with one); None: not stated."""
    revisions: tuple[Revision, ...] = ()
    percent: bool = False
    """The answer is asked for as a percentage ("as a percentage of", "what percentage",
    "give the percentage", "in percent"); False: not stated (a column named "percentage"
    says nothing)."""

    @classmethod
    def parse(cls, text: str, context: str = "", columns: Sequence[str] = ()) -> QuestionSpec:
        """Read `text` (the question; `context`, text given with it, is read for revisions
        only: a rate revised in the context applies to the question). `columns`: the
        data's column names, of which the ones the question names are kept."""
        return _parse(text or "", context or "", tuple(columns))


def decimals(text: str) -> int | None:
    """Decimal places a text asks for ("2 decimal places", "two decimals", "2 digits after
    the decimal point", "rounded to the nearest integer" → 0); None: not stated."""
    m = _DECIMALS.search(text or "")
    if m is None:
        return 0 if _INTEGER.search(text or "") else None
    return _count(m.group(1))


def number(text: str) -> float | None:
    """A number as written in a question: ``1,200``, ``2.5``, ``twelve``; None if not one."""
    text = text.lower().replace(",", "").strip()
    if text in V.NUMBER_WORDS:
        return float(V.NUMBER_WORDS[text])
    value = parse_number(text)
    return None if value is None else float(value)


def _count(token: str) -> int:
    token = token.lower()
    return int(token) if token.isdigit() else V.NUMBER_WORDS[token]


_DECIMALS = re.compile(V.DECIMALS, re.I)
_INTEGER = re.compile(V.INTEGER, re.I)
_REMOVE = re.compile(V.REMOVE, re.I)
_KEEP = re.compile(V.KEEP, re.I)
_CLAUSE_END = re.compile(V.CLAUSE_END)
THRESHOLD = re.compile("(?:" + "|".join(V.UP + V.DOWN) + ")" + V.NUMBER, re.I)
"""A "more than N" / "less than N" phrase."""
_PAIRS = (('"', '"'), ("'", "'"), ("`", "`"), ("“", "”"), ("‘", "’"))
_QUOTED = re.compile(
    r"(?<!\w)(?:"
    + "|".join(
        rf"{re.escape(a)}(?=\S)([^{re.escape(b)}\n]{{2,60}}){re.escape(b)}" for a, b in _PAIRS
    )
    + r")(?!\w)"
)
"""A quoted value: an opening quote after no letter or digit (not the apostrophe of
"Master's"), its value starting with no space, the same kind of quote closing it before no
letter or digit (not the apostrophe of "don't")."""
_YEAR = re.compile(
    r"\b(?:(?:in|during|for)\s+(?:the\s+(?:year|season)\s+(?:of\s+)?)?|year\s+(?:of\s+)?)"
    r"((?:18|19|20)\d\d)\b(?![-/.]\d)",
    re.I,
)
_STATISTICS: tuple[tuple[Statistic, re.Pattern[str]], ...] = (
    # "number of reviews" names a column as often as it asks for a count: not read here
    ("count", re.compile(r"\b(?:how\s+many|count\s+of|total\s+number\s+of)\b", re.I)),
    ("sum", re.compile(r"\b(?:sum\s+of|in\s+total|total(?!\s+number))\b", re.I)),
    ("mean", re.compile(V.MEAN, re.I)),
    ("median", re.compile(V.MEDIAN, re.I)),
    (
        # "the percentage of votes" is a column; "what percentage of …" asks for a share,
        # and so does "… as a percentage of …" (one amount over another)
        "share",
        re.compile(
            r"\b(?:(?:what|calculate|compute|find|determine|report)\s+(?:the\s+)?|as\s+an?\s+)"
            r"(?:percent(?:age)?|proportion|share|fraction)\s+of\b",
            re.I,
        ),
    ),
    (
        "extreme",
        re.compile(
            # not "at least 5" / "at most 5": those are thresholds
            r"(?<!\bat\s)\b(?:" + V.MOST + "|" + V.LEAST + r")\b",
            re.I,
        ),
    ),
    ("order", re.compile(r"\b(?:sort(?:ed)?|order(?:ed)?\s+by|rank(?:ed)?)\b", re.I)),
)
_JOIN_ALL = re.compile(
    r"\b(?:including|include|even)\b[^.;]{0,60}\b(?:without|with\s+no|no\s+matching|"
    r"that\s+have\s+no|not\s+in)\b",
    re.I,
)
_JOIN_MATCHED = re.compile(
    r"\bonly\b[^.;]{0,40}\b(?:with\s+(?:an?\s+)?(?:match\w*|corresponding)|"
    r"(?:present|found|appear\w*|listed)\s+in\s+both)\b",
    re.I,
)
_PERCENT = re.compile(
    r"\bas\s+an?\s+percent(?:age)?\b|\bwhat\s+percent(?:age)?\b|\bin\s+percent(?:age)?s?\b|"
    r"\b(?:give|report|express)\s+the\s+percentage\b",
    re.I,
)
"""The answer asked for as a percentage."""
_MAGNITUDE = re.compile(r"\s+(" + "|".join(V.MAGNITUDES) + r")\b", re.I)
_NEGATED = re.compile(r"\b(?:not|never|n't)\s*$", re.I)
_REVISED = re.compile(
    r"\b(?:revis\w*|chang\w*|updat\w*|correct\w*|adjust\w*|rais\w*|lower\w*|increas\w*|"
    r"decreas\w*|cut|went|moved?)\b[^.;\n]{0,80}?\bfrom\s+" + V.NUMBER + r"\s+to\s+" + V.NUMBER,
    re.I,
)


def threshold_spans(text: str) -> list[Threshold]:
    """Every "more than N" / "less than N" of `text`, in text order."""
    out: list[Threshold] = []
    for direction, patterns, tail in (("up", V.UP, V.UP_TAIL), ("down", V.DOWN, V.DOWN_TAIL)):
        found = [re.finditer(p + V.NUMBER, text, re.I) for p in patterns]
        found.append(re.finditer(r"(?<![\w.])" + V.NUMBER + tail, text, re.I))
        for matches in found:
            for m in matches:
                value = number(m.group(1))
                scale = _MAGNITUDE.match(text, m.end(1))
                if value is not None and scale is not None:
                    value *= V.MAGNITUDES[scale.group(1).lower()]
                if value is not None:
                    d: Direction = "up" if direction == "up" else "down"
                    out.append(
                        Threshold(
                            value=value,
                            direction=d,
                            percent=bool(m.group(2)),
                            start=m.start(),
                            keeps=_kept_side(text, m.start(), d),
                        )
                    )
    return sorted(out, key=lambda t: t.start)


def quoted_values(text: str) -> list[str]:
    """The values `text` quotes, as written between the quotes (not stripped), in text
    order: 'Veggie Salad Bowl', "Seasonal Shopping"."""
    return ["".join(groups) for groups in _QUOTED.findall(text)]


def kept_years(text: str) -> list[int]:
    """The years `text` keeps rows to ("in 2015", "in the year of 2015", "year 2012"), in
    text order, a repeated one each time; not a year it only mentions ("the same week of
    2015 and other years")."""
    return [int(y) for y in _YEAR.findall(text)]


def _kept_side(text: str, start: int, direction: Direction) -> Direction | None:
    """The side of the threshold the kept rows lie on (see `Threshold.keeps`)."""
    clause = text[:start]
    ends = list(_CLAUSE_END.finditer(clause))
    if ends:
        clause = clause[ends[-1].end() :]
    removes, keeps = bool(_REMOVE.search(clause)), bool(_KEEP.search(clause))
    if removes and keeps:
        return None
    return _FLIP[direction] if removes else direction


@lru_cache(maxsize=512)
def _parse(text: str, context: str, columns: tuple[str, ...]) -> QuestionSpec:
    named = [c for c in columns if re.search(r"(?<!\w)" + re.escape(c) + r"(?!\w)", text, re.I)]
    stats = [name for name, pattern in _STATISTICS if pattern.search(text)]
    join: JoinRows | None = None
    if any(not _NEGATED.search(text[: m.start()]) for m in _JOIN_ALL.finditer(text)):
        join = "all"  # "including those without …", not "do not include those without …"
    if _JOIN_MATCHED.search(text):
        join = None if join == "all" else "matched"
    revisions = []
    for m in _REVISED.finditer(f"{context}\n{text}"):
        old, new = number(m.group(1)), number(m.group(3))
        if old is not None and new is not None:
            revisions.append(Revision(old=old, new=new, percent=bool(m.group(2) or m.group(4))))
    return QuestionSpec(
        text=text,
        decimals=decimals(text),
        thresholds=tuple(threshold_spans(text)),
        statistic=stats[0] if len(stats) == 1 else None,
        quoted=tuple(q.strip() for q in quoted_values(text)),
        years=tuple(dict.fromkeys(kept_years(text))),
        columns=tuple(named),
        join_rows=join,
        revisions=tuple(revisions),
        percent=bool(_PERCENT.search(text)),
    )
