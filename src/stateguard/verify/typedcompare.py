"""Comparisons whose outcome the column's type fixes: a text column against a number, a
numeric column against a string.

``df.year != '2015'`` on a column of integers is true for every row, and
``chipo.choice_description != 1`` on a column of text as well: the filter keeps
everything, whatever the data. ``==`` the same way keeps nothing. The column's kind is
read by a fork probe (`stateguard.kernel.namespace.column_kinds`); code comparing a column
the probe does not know is left alone.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import NamedTuple

from stateguard.kernel import ProbeResult
from stateguard.verify.columns import column_kinds, column_of


class TypedComparison(NamedTuple):
    """``frame[column] == / != value`` as written (``shown``)."""

    frame: str
    column: str
    value: float | str
    equal: bool
    shown: str


def typed_comparisons(code: str) -> list[TypedComparison]:
    """Every ``column == constant`` / ``column != constant`` of ``code`` (a number or a
    string; booleans and None excluded)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        if not isinstance(node.ops[0], ast.Eq | ast.NotEq):
            continue
        for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            col = column_of(side)
            value = other.value if isinstance(other, ast.Constant) else None
            if col is None or isinstance(value, bool) or not isinstance(value, int | float | str):
                continue
            out.append(
                TypedComparison(
                    col[0], col[1], value, isinstance(node.ops[0], ast.Eq), ast.unparse(node)
                )
            )
    return out


def fixed_by_type(probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0) -> list[str]:
    """Each comparison of ``code`` whose outcome the column's type fixes, as a sentence."""
    found = typed_comparisons(code)
    if not found:
        return []
    kinds = column_kinds(probe, list(dict.fromkeys((c.frame, c.column) for c in found)), timeout)
    out = []
    for c in found:
        kind = kinds.get((c.frame, c.column))
        text_vs_number = kind == "text" and not isinstance(c.value, str)
        number_vs_text = kind == "number" and isinstance(c.value, str)
        if not (text_vs_number or number_vs_text):
            continue
        holds = "text" if kind == "text" else "numbers"
        given = "a number" if text_vs_number else "a string"
        outcome = "it matches no row" if c.equal else "it is true for every row"
        out.append(
            f"`{c.shown}` compares `{c.frame}[{c.column!r}]`, which holds {holds}, with "
            f"{given}: {outcome}"
        )
    return out
