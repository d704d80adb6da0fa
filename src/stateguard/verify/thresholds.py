"""Is a threshold of the question applied to the column the question attaches it to?

"Select rows where df.deaths is greater than 500 or less than 50" attaches both
thresholds to ``deaths``: the column named right before "greater than", and, through
"or", the same one for "less than 50". Code that compares ``army['deserters'] > 500``
uses the question's number on another column of the same table: a wrong column, not
a different reading of the question.

A threshold has a subject only when a column name (`stateguard.verify.columns`:
every word of it, generic-only names excluded) ends at most a few filler words
("is", "are", "of the"…) before it, or before a chain of thresholds joined by
"or"/"and". "Teams with more than 6 goals" or "regiments that have more than 5
battles" put the number on what follows, so "with" and "have" end the search. A
threshold with no such column ("more than one Canned Soda") is left alone. The code's
comparison must use the same number (a percentage also as a fraction) on a column of
a table that also holds the subject, and no comparison of the subject with it may
exist, for the step to be judged.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from stateguard.verify.columns import column_of, is_generic, word_spans, words
from stateguard.verify.consistency import THRESHOLD, Threshold, number_of, threshold_spans

_FILLER = frozenset(
    {
        "is", "are", "was", "were", "be", "been", "being", "of", "a", "an", "the", "value",
        "values", "that", "which", "its", "their", "column", "or", "and", "df", "data", "s",
    }
)  # fmt: skip
_CMPS = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)


class Subject(NamedTuple):
    """A threshold of the question and the column it is about."""

    threshold: Threshold
    column: str


def subjects(question: str, columns: Sequence[str]) -> list[Subject]:
    """Each threshold of ``question`` whose column is named just before it (see module)."""
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


def _same(value: float, t: Threshold) -> bool:
    forms = [t.value, t.value / 100] if t.percent else [t.value]
    return any(math.isclose(value, f, rel_tol=1e-9, abs_tol=1e-12) for f in forms)


def _compared(tree: ast.AST) -> list[tuple[str, str, float, str]]:
    """``(variable, column, number, shown)`` of every column-vs-number comparison."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        if not isinstance(node.ops[0], _CMPS):
            continue
        for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            value, col = number_of(other), column_of(side)
            if value is not None and col is not None:
                out.append((col[0], col[1], value, ast.unparse(node)))
    return out


def misattached(question: str, code: str, frames: Mapping[str, Sequence[str]]) -> list[str]:
    """Each comparison of ``code`` that puts a threshold of the question on another column
    than the one the question attaches it to, as a sentence. ``frames``: the columns of
    each data frame after the step."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    compared = [c for c in _compared(tree) if c[0] in frames and c[1] in frames[c[0]]]
    if not compared:
        return []
    columns = sorted({c for v, *_ in compared for c in frames[v]})
    out = []
    for subject in subjects(question, columns):
        t = subject.threshold
        same = [c for c in compared if _same(c[2], t)]
        if not same or any(c[1] == subject.column for c in same):
            continue
        for var, col, _, shown in same:
            if subject.column in frames[var]:
                out.append(
                    f"the question puts {t.value:g} on {subject.column!r}, but `{shown}` "
                    f"compares {col!r} of `{var}` with it"
                )
    return out
