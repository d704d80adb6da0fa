"""The expression a cell shows last: what its result is, as written."""

from __future__ import annotations

import ast


def shown_expression(tree: ast.Module) -> ast.expr | None:
    """The expression the last statement shows: a bare expression, or a ``print``'s one
    argument (an f-string's one formatted value)."""
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    value = tree.body[-1].value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
        and len(value.args) == 1
    ):
        value = value.args[0]
        if isinstance(value, ast.JoinedStr):
            parts = [v for v in value.values if isinstance(v, ast.FormattedValue)]
            if len(parts) != 1:
                return None
            value = parts[0].value
    return value
