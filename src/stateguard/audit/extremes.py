"""The extreme of a grouping shown where one figure over all the rows was meant.

``shipments.groupby('depot')['profit'].sum().max()`` is the largest of the depots' totals:
one depot's figure, not the total over the shipments. Written for "which depot has the
highest total" it is right; written again for "what is the total" it answers another
question with a plausible number. Whether the question asks for a grouping or an extreme
is the question layer's to say (`stateguard.question`); this module only reads the code.

`group_extreme` reads the expression a cell shows last (a bare expression, or the one
argument of a ``print``): a chain ``<table>.groupby(<key>)[<column>].<reducer>()``
followed by ``.max()`` / ``.min()`` / ``.idxmax()`` / ``.idxmin()`` (``nlargest`` and
``nsmallest`` too), with the reduction over all the rows that the same chain makes without
the grouping.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

from stateguard.audit.shown import shown_expression

_EXTREMES = frozenset({"max", "min", "idxmax", "idxmin", "nlargest", "nsmallest"})
_REDUCERS = frozenset({"sum", "mean", "median", "count", "size", "nunique"})


class GroupExtreme(BaseModel):
    """``<table>.groupby(<key>)[<column>].<reducer>().<extreme>()`` shown by a cell."""

    model_config = ConfigDict(frozen=True)

    expression: str
    """The shown expression, as written (unparsed)."""
    table: str
    """What is grouped, as written (``shipments``)."""
    key: str
    """The grouping key, as written (``'depot'``, ``shipments['depot']``)."""
    key_column: str | None = None
    """The column the key names (``'depot'`` for either spelling); None for another key
    (a list, a computed Series)."""
    column: str | None = None
    """The column selected after the grouping, as written (``'profit'``); None if none."""
    extreme: str
    reducer: str
    rewrite: str | None = None
    """The same reduction over all the rows (``shipments['profit'].sum()``); None when the
    chain selects no column after the grouping."""


def _method(node: ast.expr) -> tuple[str, ast.expr] | None:
    """(method name, the object it is called on) for ``obj.name(...)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr, node.func.value
    return None


def group_extreme(code: str) -> GroupExtreme | None:
    """The extreme of a grouped reduction the cell shows last (see the module docstring);
    None for anything else, and for code that does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    shown = shown_expression(tree)
    if shown is None:
        return None
    outer = _method(shown)
    if outer is None or outer[0] not in _EXTREMES:
        return None
    inner = _method(outer[1])
    if inner is None or inner[0] not in _REDUCERS:
        return None
    reducer, grouped = inner
    column: ast.expr | None = None
    if isinstance(grouped, ast.Subscript):
        column, grouped = grouped.slice, grouped.value
    grouping = _method(grouped)
    if grouping is None or grouping[0] != "groupby" or not isinstance(grouped, ast.Call):
        return None
    call = grouped
    if not call.args:
        return None
    table = grouping[1]
    rewrite = None
    if column is not None:
        rewrite = f"{ast.unparse(table)}[{ast.unparse(column)}].{reducer}()"
    key = call.args[0]
    if isinstance(key, ast.Subscript) and ast.unparse(key.value) == ast.unparse(table):
        key = key.slice
    key_column = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    return GroupExtreme(
        expression=ast.unparse(shown),
        table=ast.unparse(table),
        key=ast.unparse(call.args[0]),
        key_column=key_column,
        column=None if column is None else ast.unparse(column),
        extreme=outer[0],
        reducer=reducer,
        rewrite=rewrite,
    )
