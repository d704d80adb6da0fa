"""Which columns of the data a question names, and which column a threshold is about.

A question names a column when every word of the column's name is a word of the
question, up to a plural (``occupation`` in "How many different occupations…",
``item_price`` in "the mean item price"). Names made only of generic words (``id``,
``name``, ``value``…) never count as named: the question uses those words for other
things.

When the question names no column so, a column can still be named by its own words
alone, generic ones aside, used as a noun right after a word that ranges over kinds of
things ("different items" → ``item_name``, "per order" → ``order_id``), or, for an
identifier, one that counts them ("How many orders" → ``order_id``; "how many items
were ordered" counts units, so it names no ``item_name``). "Someone order…" uses the
word as a verb and names nothing (`noun_named_columns`).

A threshold is about a column (`threshold_subjects`) when the column's name ends at most a
few filler words ("is", "are", "of the"…) before it, or before a chain of thresholds
joined by "or"/"and": "deaths greater than 500 or less than 50" puts both on
``deaths``. "Teams with more than 6 goals" puts the number on what follows, so "with"
ends the search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from stateguard.question.spec import THRESHOLD, Threshold, quoted_values, threshold_spans
from stateguard.question.stems import WORD, word_runs, word_spans, words

GENERIC = frozenset(
    {
        "id",
        "name",
        "no",
        "num",
        "number",
        "code",
        "count",
        "total",
        "value",
        "index",
        "type",
        "data",
        "level",
        "unnamed",
        "col",
        "column",
        "key",
    }
)
"""Words a question uses for other things than a column: a name made only of them is never
named."""

_KINDS_OF = frozenset({"different", "distinct", "unique", "each", "every", "per"})
"""Words before a thing that range over its kinds: its name or its identifier."""
_COUNT_OF = frozenset({"many", "of", "all"})
"""Words before a thing that count it: its identifier only ("how many items were
ordered" counts units, not item names; "how many orders" counts order ids)."""
_IDENTIFIER = frozenset({"id", "no", "num", "number", "code", "key"})
_FILLER = frozenset(
    {
        "is", "are", "was", "were", "be", "been", "being", "of", "a", "an", "the", "value",
        "values", "that", "which", "its", "their", "column", "or", "and", "df", "data", "s",
    }
)  # fmt: skip
"""Words that may stand between a column's name and the threshold about it."""
_DESCRIBED_AT_LEAST = 4
"""The fewest columns of a table a text names when it describes the table's layout."""
_COLUMNS_WORD = re.compile(r"\bcolumns?\b", re.I)
_IDS_WORD = re.compile(r"\b(?:ids?|identifiers?|uuids?)\b", re.I)


def is_generic(column: str) -> bool:
    """A name made only of generic words (``id``, ``name``…), which never counts as named."""
    ws = words(column)
    return not ws or set(ws) <= GENERIC


def named_columns(question: str, columns: Iterable[str]) -> set[str]:
    """The columns every word of whose name is a word of ``question`` (see the module),
    less those named only inside a longer named column (`_inside_longer`)."""
    asked = set(words(question))
    out = set()
    for c in columns:
        ws = words(c)
        if not is_generic(c) and all(w in asked for w in ws):
            out.add(c)
    return out - _inside_longer(question, out)


def described_columns(text: str, tables: Mapping[str, Iterable[str]]) -> set[str]:
    """The columns ``text`` names while describing a table's layout: where it names at
    least four of a table's columns and more than half of them, it says what each column
    holds ("issued_on is the day of the rental, desk_id the desk that issued it…"), not a
    formula over a few of them, so those names are no terms an answer must read. A
    formula names the two or three columns it combines ("takings are handsets ×
    handset_price"); a table of three columns is not told apart so, and counts as
    described by no text."""
    out: set[str] = set()
    for columns in tables.values():
        columns = list(columns)
        named = named_columns(text, columns)
        if len(named) >= _DESCRIBED_AT_LEAST and 2 * len(named) > len(columns):
            out |= named
    return out


def quoted_columns(question: str, columns: Iterable[str]) -> set[str]:
    """The columns ``question`` quotes by their exact name (`the "Total" column`), generic
    names included: a quote sets the name apart from the words around it."""
    quoted = set(quoted_values(question))
    return {c for c in columns if c in quoted}


def _inside_longer(question: str, named: set[str]) -> set[str]:
    """The named columns whose every word the question uses only inside the words of a
    longer named column standing together: "the power-to-weight ratio" names
    ``power_to_weight``, not ``weight``; "the weight and the power-to-weight ratio" names
    both."""
    spans = [s[2] for s in word_spans(question)]
    runs = {c: word_runs(spans, words(c)) for c in named}
    out = set()
    for c in named:
        ws = set(words(c))
        covered: set[int] = set()
        for d in named:
            if d != c and ws < set(words(d)):
                covered.update(i for r in runs[d] for i in r)
        if covered and all(i in covered for i, w in enumerate(spans) if w in ws):
            out.add(c)
    return out


def noun_named_columns(question: str, columns: Iterable[str]) -> set[str]:
    """The columns with a generic word whose other words follow, in order, a word that
    counts or ranges over things in ``question`` (see the module)."""
    spans = [s[2] for s in word_spans(question)]
    lowered = [w.lower() for w in WORD.findall(question)]
    out = set()
    for c in columns:
        ws = words(c)
        own = [w for w in ws if w not in GENERIC]
        if not own or len(own) == len(ws):
            continue
        before = _KINDS_OF | (_COUNT_OF if set(ws) & _IDENTIFIER else frozenset())
        for i in range(1, len(spans) - len(own) + 1):
            if spans[i : i + len(own)] == own and lowered[i - 1] in before:
                out.add(c)
                break
    return out


def speaks_of_columns(question: str) -> bool:
    """Whether ``question`` uses the word "column(s)"."""
    return bool(_COLUMNS_WORD.search(question))


def speaks_of_ids(question: str) -> bool:
    """Whether ``question`` speaks of identifiers ("id(s)", "identifier(s)", "uuid(s)")."""
    return bool(_IDS_WORD.search(question))


class Subject(NamedTuple):
    """A threshold of the question and the column it is about."""

    threshold: Threshold
    column: str


def threshold_subjects(question: str, columns: Sequence[str]) -> list[Subject]:
    """Each threshold of ``question`` whose column is named just before it (see the module)."""
    spans = word_spans(question)
    mentions: list[tuple[int, str]] = []  # (end offset, column)
    for c in columns:
        ws = words(c)
        if is_generic(c):
            continue
        for i in range(len(spans) - len(ws) + 1):
            if [s[2] for s in spans[i : i + len(ws)]] == ws:
                mentions.append((spans[i + len(ws) - 1][1], c))
    out = []
    for t in threshold_spans(question):
        before = [m for m in mentions if m[0] <= t.start]
        if not before:
            continue
        end = max(e for e, _ in before)
        named = {c for e, c in before if e == end}
        if len(named) != 1:
            continue
        between = THRESHOLD.sub(" ", question[end : t.start])
        if all(w.lower() in _FILLER for w in re.findall(r"[A-Za-z]+", between)):
            out.append(Subject(t, named.pop()))
    return out
