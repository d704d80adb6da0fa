"""A quantity the task defines, asked for, answered with a column named for something else.

"What is the total payout of the Harbour restaurants?" after a context that says "The
restaurant's payout of a delivered order is its basket_value minus the commission",
answered by ``orders[orders['district'] == 'Harbour']['basket_value'].sum()``: the cell
sums a column, and neither that column nor anything the turn read is named for the payout.
The definitions and the asked terms are read in `stateguard.question.definitions`; this
module reads the code's side: which columns a cell's last statement selects and then
reduces (`reduced_columns`), and whether a name carries a term's words (`names_term`).

A cell that computes the quantity inline (``(orders['basket_value'] * 0.82).sum()``)
reduces no selected column, so it is never doubted here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from stateguard.question import Definition, words

REDUCERS = frozenset(
    {"sum", "mean", "median", "max", "min", "idxmax", "idxmin", "nlargest", "nsmallest", "agg",
     "aggregate", "count", "nunique", "std", "var", "prod", "quantile", "describe"}
)  # fmt: skip
"""Methods that reduce a selected column to one value or one value per group."""
_SHOWN = frozenset({"print", "round", "float", "int", "display"})
"""Calls that show or convert a value without computing another from it."""


def _selected(node: ast.AST, columns: frozenset[str]) -> list[str]:
    """The column a chain selects nearest its end: ``x['c']``, ``x[['c']]``, or ``x.c``
    when ``c`` is one of ``columns``."""
    while True:
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return [key.value]
            if isinstance(key, ast.List) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in key.elts
            ):
                return [e.value for e in key.elts]  # type: ignore[attr-defined]
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            return [node.attr] if node.attr in columns else []
        else:
            return []


def _value_of(stmt: ast.stmt) -> list[ast.expr]:
    """What a statement shows: an expression's value, an assignment's, a ``print``'s
    arguments; each element of a tuple."""
    if isinstance(stmt, ast.Expr | ast.Assign):
        values = [stmt.value]
    else:
        return []
    out: list[ast.expr] = []
    while values:
        v = values.pop(0)
        if isinstance(v, ast.Tuple):
            values[:0] = list(v.elts)
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in _SHOWN:
            values[:0] = list(v.args[:1] if v.func.id == "round" else v.args)
        else:
            out.append(v)
    return out


def _reduced(node: ast.expr, columns: frozenset[str]) -> list[str]:
    """The column a value is a reduction of, down its method chain: the chain's reduction
    nearest the end whose receiver selects a column (``….sum().idxmax()`` → the summed
    column). Arithmetic on a reduction (``x['v'].sum() * 0.15``) is a value computed from
    it, not the reduction: nothing."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        receiver = node.func.value
        if node.func.attr in REDUCERS:
            picked = _selected(receiver, columns)
            if picked:
                return picked
        node = receiver
    return []


def reduced_columns(code: str, columns: Iterable[str] = ()) -> list[str]:
    """The columns the value the last statement of ``code`` shows is a reduction of
    (``df.groupby('k')['v'].sum().round(2)`` → v; ``df[df.k == 'a']['v'].mean()`` → v;
    ``df.v.sum()`` → v when v is one of ``columns``), in order; empty when the value is
    computed from reductions (``df['v'].sum() * 0.85``) or is no reduction."""
    known = frozenset(columns)
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return []
    if not body:
        return []
    out: list[str] = []
    for value in _value_of(body[-1]):
        for column in _reduced(value, known):
            if column not in out:
                out.append(column)
    return out


def names_term(name: str, definition: Definition) -> bool:
    """Whether ``name`` (a variable, a column, or a lineage name such as
    ``orders['payout']``) holds one of the term's key words, or its abbreviation."""
    held = set(words(name))
    if definition.abbreviation and definition.abbreviation.lower() in {w.lower() for w in held}:
        return True
    return bool(set(definition.key_words) & held)


def is_column(definition: Definition, columns: Iterable[str]) -> bool:
    """Whether the term is the name of a column of the data (then it is the data's)."""
    return any(tuple(words(c)) == definition.words for c in columns)
