"""The words with which a question asks for a statistic, an extreme, an order or a square.

`aggregate_words` says which of these wordings a question uses, each as a flag; a rule
that compares them with what code computes (a mean where "how many" was asked, a minimum
where "the most" was) reads the flags, not the wording. Unlike `QuestionSpec.statistic`,
which names the one statistic asked for, the flags are independent: a question may use
several.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from stateguard.question import vocabulary as V

_MAX_WORDS = re.compile(r"\b(?:" + V.MOST + r")\b", re.I)
_MIN_WORDS = re.compile(r"\b(?:" + V.LEAST + r")\b", re.I)
# "Which continent drinks more beer?": a comparative in a which/who question with no
# "than" asks for the extreme ("more than 6" is a threshold, "more X than Y" a comparison).
_WHICH = r"^\s*(?:which|who)\b(?![^?]*\bthan\b)[^?]*"
_MORE = re.compile(_WHICH + r"\b(?:more|higher|larger|bigger|greater)\b", re.I)
_LESS = re.compile(_WHICH + r"\b(?:less|fewer|lower|smaller)\b", re.I)
_DESC = re.compile(
    r"\b(?:descending|highest\s+first|largest\s+first|high\s+to\s+low|"
    r"(?:most|highest|largest)\s+to\s+(?:the\s+)?(?:least|less|lowest|smallest))\b",
    re.I,
)
_ASC = re.compile(
    r"\b(?:ascending|lowest\s+first|smallest\s+first|low\s+to\s+high|"
    r"(?:least|lowest|smallest)\s+to\s+(?:the\s+)?(?:most|highest|largest))\b",
    re.I,
)
_MEAN = re.compile(V.MEAN, re.I)
_MEDIAN = re.compile(V.MEDIAN, re.I)
_TOTAL = re.compile(r"\b(?:in\s+total|total\s+number|sum\s+of|how\s+many)\b", re.I)
_COUNT = re.compile(
    r"\b(?:in\s+total|total\s+number|sum\s+of|how\s+many|count\s+(?:the|all)|number\s+of)\b",
    re.I,
)
_SHARE = re.compile(r"\b(?:percent\w*|proportion|share|ratio|rate|fraction|per\s+cent)\b", re.I)
_AMOUNT = re.compile(r"\bhow\s+much\b|\ball\s+the\b", re.I)
_PER_THING = re.compile(
    r"\b(?:per|each|every|typical(?:ly)?|usual(?:ly)?|expected|normally)\b", re.I
)
_HOW_MANY = re.compile(r"\b(?:how\s+many|total\s+number|number\s+of|count(?:s|ing)?)\b", re.I)
_NOT_A_COUNT = re.compile(
    r"\b(?:times|per|each|every|hours?|minutes?|seconds?|days?|weeks?|months?|years?|miles?|"
    r"km|kilomet\w+|met(?:er|re)s?|feet|foot|inch\w*|pounds?|lbs?|kg|kilo\w*|grams?|"
    r"lit(?:er|re)s?|gallons?|dollars?|euros?|calories|points?|degrees?|units?|tons?|"
    r"tonnes?|acres?|hectares?|kwh|watts?)\b|%|\$",
    re.I,
)
_SQUARE = re.compile(r"\b(?:squares?|squared|variance|power|quadratic|times\s+itself)\b", re.I)


class AggregateWords(BaseModel):
    """Which aggregate wordings a question uses (each False: the question does not)."""

    model_config = ConfigDict(frozen=True)

    mean: bool = False
    """"mean", "average", "avg"."""
    median: bool = False
    """"median"."""
    total: bool = False
    """"in total", "total number", "sum of", "how many"."""
    count: bool = False
    """The words of `total`, or "count the", "count all", "number of"."""
    how_many: bool = False
    """"how many", "total number", "number of", "count(s)", "counting"."""
    not_a_count: bool = False
    """Wording under which "how many" is not a count of things: a rate ("times", "per",
    "each"), a unit of measure ("hours", "km", "dollars"…), "%" or "$"."""
    share: bool = False
    """"percent…", "proportion", "share", "ratio", "rate", "fraction", "per cent"."""
    per_thing: bool = False
    """A value per thing or a typical one: "per", "each", "every", "typical(ly)",
    "usual(ly)", "expected", "normally"."""
    amount: str | None = None
    """"how much" or "all the" as the question writes it (the first); None: neither."""
    most: bool = False
    """The largest: "most", "highest", "top"…, or a which/who question with "more",
    "higher"… and no "than" ("Which continent drinks more beer?")."""
    least: bool = False
    """The smallest: "least", "lowest", "fewest"…, or a which/who question with "less",
    "fewer"… and no "than"."""
    descending: bool = False
    """"descending", "highest first", "high to low", "most to least"…"""
    ascending: bool = False
    """"ascending", "lowest first", "low to high", "least to most"…"""
    square: bool = False
    """"square(s)", "squared", "variance", "power", "quadratic", "times itself"."""


@lru_cache(maxsize=512)
def aggregate_words(question: str) -> AggregateWords:
    """The aggregate wordings ``question`` uses (see `AggregateWords`)."""
    amount = _AMOUNT.search(question)
    return AggregateWords(
        mean=bool(_MEAN.search(question)),
        median=bool(_MEDIAN.search(question)),
        total=bool(_TOTAL.search(question)),
        count=bool(_COUNT.search(question)),
        how_many=bool(_HOW_MANY.search(question)),
        not_a_count=bool(_NOT_A_COUNT.search(question)),
        share=bool(_SHARE.search(question)),
        per_thing=bool(_PER_THING.search(question)),
        amount=None if amount is None else amount.group(),
        most=bool(_MAX_WORDS.search(question) or _MORE.search(question)),
        least=bool(_MIN_WORDS.search(question) or _LESS.search(question)),
        descending=bool(_DESC.search(question)),
        ascending=bool(_ASC.search(question)),
        square=bool(_SQUARE.search(question)),
    )
