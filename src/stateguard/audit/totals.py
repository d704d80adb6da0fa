"""Totals multiplied together: the sum of one column times the sum of another.

``t["weight"].sum() * t["rate"].sum()`` is not the total of the per-row products
``(t["weight"] * t["rate"]).sum()``; it is larger by a factor of about the number of
rows, and carries a unit no question asks for (kilograms times a sum of prices per
kilogram). It runs without a word and prints one plausible-looking number.

`multiplied_totals` reads it from a cell's code alone: a product whose two factors are
each the ``.sum()`` (or ``np.sum(...)``) of a column of one table, written in place or
through a name the cell bound to such a sum in an earlier statement
(``w = t["weight"].sum()`` … ``w * t["rate"].sum()``). Sums of two different tables
(a count of one times a price of another) are left alone, as are means and counts.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import frame_column

_NUMPY = frozenset({"np", "numpy"})


class MultipliedTotals(BaseModel):
    """``table[left].sum() * table[right].sum()`` in a cell."""

    model_config = ConfigDict(frozen=True)

    table: str
    left: str
    right: str
    line: int

    def describe(self) -> str:
        return (
            f"line {self.line} multiplies the total of `{self.table}[{self.left!r}]` by "
            f"the total of `{self.table}[{self.right!r}]`"
        )


def _summed(node: ast.expr, bound: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The (table, column) whose total ``node`` is: ``t["c"].sum()``, ``np.sum(t["c"])``,
    or a name bound to one of those."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != "sum":
        return None
    if isinstance(func.value, ast.Name) and func.value.id in _NUMPY:
        return frame_column(node.args[0]) if len(node.args) == 1 else None
    return None if node.args else frame_column(func.value)


def multiplied_totals(code: str) -> list[MultipliedTotals]:
    """Each product in ``code`` of the totals of two columns of one table (see the module
    docstring); [] for code that does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    bound: dict[str, tuple[str, str]] = {}
    found: list[MultipliedTotals] = []
    for statement in tree.body:
        for node in ast.walk(statement):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
                continue
            left, right = _summed(node.left, bound), _summed(node.right, bound)
            if left is not None and right is not None and left[0] == right[0]:
                found.append(
                    MultipliedTotals(table=left[0], left=left[1], right=right[1], line=node.lineno)
                )
        if isinstance(statement, ast.Assign):
            total = _summed(statement.value, bound)
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    if total is None:
                        bound.pop(target.id, None)
                    else:
                        bound[target.id] = total
        else:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    bound.pop(node.id, None)
    return found
