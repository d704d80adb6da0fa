"""Arithmetic that means nothing on the column it is done on (no model, no reference).

Two kinds, both read from the code and the columns' contents after the step (a fork
probe, `stateguard.kernel.namespace.column_kinds`):

- **text**: a sum, mean or product of a column holding strings, or a string column
  multiplied or divided. pandas' ``sum`` of strings concatenates them and ``*`` repeats
  them, so "How many items were ordered?" answered by ``chipo.item_name.sum()`` runs and
  returns one very long string.
- **identifier**: the same arithmetic on a numeric column named as an identifier
  (``order_id``, ``PassengerId``, ``ID``). Its values are labels: a sum of order ids or
  ``quantity * order_id`` is a number with no meaning, and so is a threshold on one
  (``order_id > 1`` for "ordered more than one"). Counting, grouping by, sorting,
  equality with an id or taking the largest id are left alone, and so is any step
  whose question speaks of ids itself.

`numbers_as_dates` reads one more: ``pd.to_datetime`` of a column holding numbers, with
neither ``unit=`` nor ``format=``. pandas reads each number as nanoseconds after
1970-01-01, so every date falls in the first second of 1970 (``20230115`` and ``2015``
alike): a swapped column, or a unit left out.

`hardcoded_ids` reads one more use of an identifier, from the code alone: an equality
with a number the question does not name (``order_id == 1`` for "the price of each
item"), one record picked by a label seen somewhere rather than by what was asked.

Only operations that combine values are judged: ``sum``, ``mean``, ``median``,
``prod``, ``std``, ``var``, ``cumsum``, ``cumprod`` and the operators ``*``, ``/``,
``//``, ``**``, and for identifiers an order comparison with a number (``>``, ``>=``,
``<``, ``<=``). ``+`` and ``-`` are left alone (``first + ' ' + last`` joins text,
``id - id.shift()`` finds gaps).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import NamedTuple

from stateguard.audit.filterchecks import probe_json
from stateguard.kernel import ProbeResult, namespace
from stateguard.question import names_number, speaks_of_ids, words
from stateguard.verify.columns import column_kinds, column_of
from stateguard.verify.consistency import number_of, number_text

_COMBINING = frozenset({"sum", "mean", "median", "prod", "std", "var", "cumsum", "cumprod"})
_OPERATORS = (ast.Mult, ast.Div, ast.FloorDiv, ast.Pow)
_ORDER = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
_ID_WORDS = frozenset({"id", "identifier", "uuid"})


class Use(NamedTuple):
    """A column combined arithmetically: ``frame[column]`` in the expression ``shown``."""

    frame: str
    column: str
    shown: str
    threshold: bool = False
    """An order comparison with a number (judged on identifiers only)."""


def combined_columns(code: str) -> list[Use]:
    """Every column of ``code`` that is summed, averaged, multiplied… (see the module)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[Use] = []

    def add(node: ast.AST, around: ast.AST, threshold: bool = False) -> None:
        col = column_of(node)
        if col is not None:
            out.append(Use(col[0], col[1], ast.unparse(around), threshold))

    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _COMBINING
        ):
            add(node.func.value, node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
            add(node.left, node)
            add(node.right, node)
        elif (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _ORDER)
        ):
            left, right = node.left, node.comparators[0]
            if number_of(right) is not None:
                add(left, node, threshold=True)
            elif number_of(left) is not None:
                add(right, node, threshold=True)
    return list(dict.fromkeys(out))


def is_identifier(column: str) -> bool:
    """A column named as an identifier: its last word is ``id`` (``order_id``, ``PassengerId``)."""
    ws = words(column)
    return bool(ws) and ws[-1] in _ID_WORDS


def meaningless(
    probe: Callable[..., ProbeResult], code: str, question: str, timeout: float = 20.0
) -> list[str]:
    """Each arithmetic of ``code`` on a text or identifier column, as a sentence."""
    ids_asked = speaks_of_ids(question)
    # a threshold matters on an identifier only: no probe for `year > 2024`
    uses = [
        u
        for u in combined_columns(code)
        if not u.threshold or (is_identifier(u.column) and not ids_asked)
    ]
    if not uses:
        return []
    kinds = column_kinds(probe, list(dict.fromkeys((u.frame, u.column) for u in uses)), timeout)
    out: list[str] = []
    for u in uses:
        kind = kinds.get((u.frame, u.column))
        if u.threshold:
            if kind == "number":
                out.append(
                    f"`{u.shown}` compares `{u.frame}[{u.column!r}]`, an identifier, with a "
                    "number by size: its values are labels, not quantities"
                )
        elif kind == "text":
            out.append(
                f"`{u.shown}` combines `{u.frame}[{u.column!r}]`, which holds text: a sum of "
                "strings concatenates them and `*` repeats them"
            )
        elif kind == "number" and is_identifier(u.column) and not ids_asked:
            out.append(
                f"`{u.shown}` does arithmetic on `{u.frame}[{u.column!r}]`, an identifier: "
                "its values are labels, not quantities"
            )
    return out


_EXTREME_ROWS = frozenset({"idxmax", "idxmin", "argmax", "argmin"})


def _calls_on_columns(code: str, methods: frozenset[str]) -> list[Use]:
    """Each ``frame['c'].m()`` of ``code`` (through a chain) whose method is in ``methods``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return list(
        dict.fromkeys(
            Use(col[0], col[1], ast.unparse(node))
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in methods
            and (col := column_of(node.func.value)) is not None
        )
    )


def _probed_pairs(
    probe: Callable[..., ProbeResult], helper: str, uses: list[Use], timeout: float
) -> set[tuple[str, str]]:
    """The ``(frame, column)`` pairs of ``uses`` the kernel-side ``helper`` prints."""
    if not uses:
        return set()
    pairs = list(dict.fromkeys((u.frame, u.column) for u in uses))
    rows = probe_json(probe, namespace.call(helper, pairs), timeout)
    try:
        return {(str(f), str(c)) for f, c in rows or []}
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return set()


def alphabetical_extremes(
    probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0
) -> list[str]:
    """Each ``idxmax``/``idxmin`` of a column of words, as a sentence: it picks the row
    whose text is last (or first) in alphabetical order, rarely what an extreme means
    (the column read by a fork probe, `stateguard.kernel.namespace.word_columns`)."""
    uses = _calls_on_columns(code, _EXTREME_ROWS)
    words_held = _probed_pairs(probe, "word_columns", uses, timeout)
    return [
        f"`{u.shown}` picks a row by `{u.frame}[{u.column!r}]`, which holds words: the row"
        " whose text comes first or last in alphabetical order"
        for u in uses
        if (u.frame, u.column) in words_held
    ]


def flag_medians(probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0) -> list[str]:
    """Each median of a column that holds only 0 and 1 (or False and True), as a sentence:
    its value is 0, 1 or 0.5 whatever the share of ones, the majority and not a rate (the
    column's kind read by a fork probe, `stateguard.kernel.namespace.flag_columns`)."""
    uses = _calls_on_columns(code, frozenset({"median"}))
    flags = _probed_pairs(probe, "flag_columns", uses, timeout)
    return [
        f"`{u.shown}` takes the median of `{u.frame}[{u.column!r}]`, which holds only 0 and 1:"
        " it is 0, 1 or 0.5 whatever the share of ones (a mean gives the share)"
        for u in uses
        if (u.frame, u.column) in flags
    ]


def numbers_as_dates(
    probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0
) -> list[str]:
    """Each ``to_datetime`` of a column of numbers without ``unit=`` or ``format=``, as a
    sentence (see the module; the column's kind read by a fork probe)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    uses = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if name != "to_datetime" or {k.arg for k in node.keywords} & {"unit", "format"}:
            continue
        col = column_of(node.args[0])
        if col is not None:
            uses.append(Use(col[0], col[1], ast.unparse(node)))
    if not uses:
        return []
    kinds = column_kinds(probe, list(dict.fromkeys((u.frame, u.column) for u in uses)), timeout)
    return [
        f"`{u.shown[:160]}` reads `{u.frame}[{u.column!r}]`, which holds numbers, as "
        "nanoseconds after 1970-01-01 (no `unit=` or `format=`): every date falls in the "
        "first second of 1970"
        for u in uses
        if kinds.get((u.frame, u.column)) == "number"
    ]


def hardcoded_ids(code: str, question: str) -> list[str]:
    """Each equality of an identifier column with a number the question does not name
    (``chipo.order_id == 1`` for "the price of each item"): one record picked by a label
    seen somewhere, not by anything the question asks. From the code alone."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
        ):
            continue
        for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            col = column_of(side)
            value = number_of(other)
            if col is None or not is_identifier(col[1]) or value is None:
                continue
            shown = number_text(value)
            if not names_number(question, shown):
                out.append(
                    f"`{ast.unparse(node)}` picks `{col[0]}[{col[1]!r}]` {shown}, an "
                    "identifier the question does not name"
                )
    return out
