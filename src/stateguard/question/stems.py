"""The words of a question or a column name, stemmed so that a plural matches its singular.

A name is split at underscores, spaces, digits and case changes (``itemPrice``,
``item_price`` and ``Item Price`` are all item, price), a question at every non-letter;
each word is lower-cased and loses an English plural ending. Both sides of "does the
question name this column" are split here, so they split alike.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
"""One word: an upper-case run, a capitalised or lower-case word, or digits."""


def stem(word: str) -> str:
    """``word`` lower-cased without an English plural ending (``cities`` → ``city``)."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "xes", "zes", "ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def words(name: str) -> list[str]:
    """The stemmed words of a name: ``itemPrice``, ``item_price``, ``Item Price`` → item, price."""
    return [stem(w) for w in WORD.findall(name)]


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, stemmed word)`` of every word of ``text``, split as `words` splits."""
    return [(m.start(), m.end(), stem(m.group())) for m in WORD.finditer(text)]


def word_runs(spans: list[str], ws: list[str]) -> list[range]:
    """The positions in ``spans`` (the stemmed words of a text) of every place the words
    ``ws`` stand together, in order."""
    n = len(ws)
    if n == 0:
        return []
    return [range(i, i + n) for i in range(len(spans) - n + 1) if spans[i : i + n] == ws]
