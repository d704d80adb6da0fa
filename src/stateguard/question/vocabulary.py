"""The words the question layer reads, in one place: number words, the phrases of a
threshold's direction, the verbs that remove rows, the phrases of rounding, and the words
of a mean, a median and an extreme.

Every table here is used by the modules of `stateguard.question` only; the rest of the
package reads questions through them.
"""

from __future__ import annotations

NUMBER_WORDS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
"""The one number-word table."""

NUMBER_WORD = "|".join(NUMBER_WORDS)

NUMBER = r"[$€£]?\s?(-?\d[\d,]*(?:\.\d+)?|" + NUMBER_WORD + r")\s?(%|percent)?"
"""A number as a question writes it (group 1), with its percent sign (group 2)."""

MAGNITUDES: dict[str, float] = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
"""Words after a number that scale it: "3 million" is 3,000,000."""

UP = (
    r"\b(?:more|greater|higher|larger|bigger|longer|older)\s+than\s+",
    # "the above two frames", "the over 60 group" read as an adjective: not a threshold
    r"(?<!\bthe\s)\b(?:over|above|exceed(?:s|ing)?|at\s+least|no\s+less\s+than|"
    r"not\s+less\s+than)\s+",
)
"""Phrases before N of "more than N"."""

DOWN = (
    r"\b(?:less|fewer|lower|smaller|shorter|younger)\s+than\s+",
    r"\b(?:under|below|at\s+most|no\s+more\s+than|not\s+more\s+than)\s+",
)
"""Phrases before N of "less than N"."""

UP_TAIL = r"\s+or\s+(?:more|greater|higher|above)(?!\s+than)"
DOWN_TAIL = r"\s+or\s+(?:less|fewer|lower|below)(?!\s+than)"
"""Phrases after N: "10 or more", "5 or fewer"."""

REMOVE = (
    r"\b(?:remov(?:e|es|ed|ing)|drop(?:s|ped|ping)?|exclud(?:e|es|ed|ing)|"
    r"filter(?:s|ed|ing)?\s+out|discard(?:s|ed|ing)?|delet(?:e|es|ed|ing)|"
    r"get(?:ting)?\s+rid\s+of|eliminat(?:e|es|ed|ing)|omit(?:s|ted|ting)?|"
    r"clip(?:s|ped|ping)?|trim(?:s|med|ming)?)\b"
)
"""Verbs whose object is the rows taken away: the rows a threshold after them describes are
the ones removed, so the rows kept meet the opposite."""

KEEP = (
    r"\b(?:keep(?:s|ing)?|kept|retain(?:s|ed|ing)?|select(?:s|ed|ing)?|only|filter(?:s|ed|ing)?"
    r"(?!\s+out)\s+(?:for|to)|consider(?:ing)?\s+only)\b"
)
"""Words that say the rows a threshold describes are the ones kept."""

CLAUSE_END = r"[.;!?]\s|\n"
"""Where a clause ends: a verb before it does not govern a threshold after it."""

DECIMALS = (
    r"(?:round(?:ed)?|rounding)?\s*(?:to|with)?\s*(\d+|" + NUMBER_WORD + r")\s+"
    r"(?:decimal(?:\s+places?|s)?|d\.?p\.?|digits?\s+after\s+the\s+decimal\s+(?:point|separator))"
)
""""2 decimal places", "two decimals", "3 d.p.", "2 digits after the decimal point"."""

INTEGER = (
    r"\bround(?:ed|ing)?\s+(?:it\s+|them\s+|off\s+)?(?:up\s+|down\s+)?to\s+(?:the\s+)?"
    r"(?:nearest\s+)?(?:an?\s+)?(?:integers?|whole\s+numbers?|int)\b"
)
""""rounded to the nearest integer": 0 places."""

MEAN = r"\b(?:mean|average|avg)\b"
""""mean", "average", "avg"."""

MEDIAN = r"\bmedian\b"

MOST = "most|highest|largest|biggest|maximum|greatest|top"
"""Words of the largest ("the most common", "the top 5")."""

LEAST = "least|lowest|smallest|minimum|fewest"
"""Words of the smallest."""
