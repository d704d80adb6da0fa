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

A threshold can also count things the code selects by name: "more than one Canned
Soda", with ``item_name == 'Canned Soda'`` in the code, counts sodas, so the column
compared with 1 must hold counts. `counted_on_fractions` asks the kernel (a fork
probe) whether that column holds a non-whole value: ``item_price > 1`` compares a price
with the number of sodas.

The question's side (the column a threshold is about, the thing it counts) is read in
`stateguard.question` (`threshold_subjects`, `counted_things`); this module reads the code's.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence

from stateguard.audit.filterchecks import probe_json
from stateguard.kernel import ProbeResult, namespace
from stateguard.question import Threshold, counted_things, words
from stateguard.question import threshold_subjects as subjects
from stateguard.verify.columns import column_of
from stateguard.verify.consistency import number_of
from stateguard.verify.readings import Reading

_CMPS = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)


def _same(value: float, t: Threshold) -> bool:
    forms = [t.value, t.value / 100] if t.percent else [t.value]
    return any(math.isclose(value, f, rel_tol=1e-9, abs_tol=1e-12) for f in forms)


def _compared(tree: ast.AST) -> list[tuple[str, str, float, str]]:
    """``(variable, column, number, shown)`` of every column-vs-number comparison."""
    return [c[:4] for c in _comparisons(tree)]  # type: ignore[misc]


def _comparisons(tree: ast.AST) -> list[tuple[str, str, float, str, ast.Compare, bool]]:
    """`_compared` with the node and whether the column is on its left."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        if not isinstance(node.ops[0], _CMPS):
            continue
        for left, (side, other) in (
            (True, (node.left, node.comparators[0])),
            (False, (node.comparators[0], node.left)),
        ):
            value, col = number_of(other), column_of(side)
            if value is not None and col is not None:
                out.append((col[0], col[1], value, ast.unparse(node), node, left))
    return out


def _on_column(node: ast.Compare, left: bool, var: str, column: str) -> str:
    """The comparison ``node`` with its column side replaced by ``var[column]``."""
    swapped = ast.parse(f"{var}[{column!r}]", mode="eval").body
    made = ast.Compare(
        left=swapped if left else node.left,
        ops=node.ops,
        comparators=[node.comparators[0] if left else swapped],
    )
    return ast.unparse(made)


def misattached(question: str, code: str, frames: Mapping[str, Sequence[str]]) -> list[str]:
    """Each comparison of ``code`` that puts a threshold of the question on another column
    than the one the question attaches it to, as a sentence. ``frames``: the columns of
    each data frame after the step."""
    return [c.message for c in misattached_readings(question, code, frames)]


def misattached_readings(
    question: str, code: str, frames: Mapping[str, Sequence[str]]
) -> list[Reading]:
    """`misattached` with, for each, the comparison as written and on the column the
    question attaches the threshold to, for a probe to corroborate on the data."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    compared = [c for c in _comparisons(tree) if c[0] in frames and c[1] in frames[c[0]]]
    if not compared:
        return []
    columns = sorted({c for v, *_ in compared for c in frames[v]})
    out = []
    for subject in subjects(question, columns):
        t = subject.threshold
        same = [c for c in compared if _same(c[2], t)]
        if not same or any(c[1] == subject.column for c in same):
            continue
        for var, col, _, shown, node, left in same:
            if subject.column in frames[var]:
                message = (
                    f"the question puts {t.value:g} on {subject.column!r}, but `{shown}` "
                    f"compares {col!r} of `{var}` with it"
                )
                out.append(Reading(message, shown, _on_column(node, left, var, subject.column)))
    return out


def _literals(tree: ast.AST) -> list[list[str]]:
    """The words of each short text constant of the code (``'Canned Soda'``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            ws = words(node.value)
            if 0 < len(ws) <= 5 and len(node.value) <= 60:
                out.append(ws)
    return out


def counted_thresholds(question: str, code: str) -> list[tuple[Threshold, str]]:
    """Each threshold of ``question`` whose number is followed by a thing the code names
    by a text constant ("more than one Canned Soda" and ``'Canned Soda'``), with the
    thing's words as the question writes them."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    literals = _literals(tree)
    if not literals:
        return []
    return counted_things(question, literals)


def counted_on_fractions(
    probe: Callable[..., ProbeResult], question: str, code: str, timeout: float = 20.0
) -> list[str]:
    """Each comparison of ``code`` that puts a threshold counting things (see
    `counted_thresholds`) on a column holding non-whole values, as a sentence (one probe;
    none when the question counts nothing the code names)."""
    counted = counted_thresholds(question, code)
    if not counted:
        return []
    compared = _compared(ast.parse(code))
    hits = [(t, thing, c) for t, thing in counted for c in compared if _same(c[2], t)]
    if not hits:
        return []
    pairs = sorted({(c[0], c[1]) for _, _, c in hits})
    rows = probe_json(probe, namespace.call("fractional_columns", pairs), timeout)
    try:
        fractional = {(str(f), str(c)) for f, c in rows or []}
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return []
    return [
        f"the question counts {thing!r} ({t.value:g}), but `{shown}` compares {col!r} of "
        f"`{var}`, which holds non-whole values, with it: {col!r} is not a count of them"
        for t, thing, (var, col, _, shown) in hits
        if (var, col) in fractional
    ]
