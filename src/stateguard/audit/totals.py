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

`bound_reduction` reads the other slip of the same formula: a reduction written on one
term only, ``t["weight"] * t["rate"].sum()``, which leaves the other term one value per
row. It gives the formula with the reduction moved outside, ``(t["weight"] *
t["rate"]).sum()``, for the note told when the cell shows a Series of one value per row.
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


_REDUCERS = frozenset({"sum", "mean"})


class BoundReduction(BaseModel):
    """A formula over columns of ``table`` whose reduction binds to one term, and the
    formula with the reduction over the whole of it."""

    model_config = ConfigDict(frozen=True)

    table: str
    reducer: str
    written: str
    rewrite: str


def _reduced(node: ast.AST) -> tuple[str, str] | None:
    """(table, reducer) of ``t["c"].sum()`` / ``t["c"].mean()`` (no arguments)."""
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return None
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in _REDUCERS:
        return None
    column = frame_column(func.value)
    return (column[0], func.attr) if column is not None else None


def _reducer_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _REDUCERS
    )


def _bare_columns(node: ast.AST) -> set[str]:
    """Tables of the columns ``node`` reads as per-row terms: outside any reduction call
    and outside the selector of a subscript (``t[t['x'] > 0]['y']`` reads ``x`` to
    select rows, not as a term)."""
    if _reducer_call(node):
        return set()
    if isinstance(node, ast.Subscript | ast.Attribute) and frame_column(node) is not None:
        found = frame_column(node)
        return {found[0]} if found is not None else set()
    if isinstance(node, ast.Subscript):
        return _bare_columns(node.value)
    out: set[str] = set()
    for child in ast.iter_child_nodes(node):
        out |= _bare_columns(child)
    return out


_TERMS = (ast.Add, ast.Sub, ast.Mult)
"""The operators of a formula whose reduction can move outside it: a sum of products is
the product summed; a ratio is not (``a / b.sum()`` is each row's share of a total)."""


class _Unreduce(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _reduced(node) is not None:
            assert isinstance(node.func, ast.Attribute)
            return node.func.value
        return self.generic_visit(node)


def _outermost_formulas(tree: ast.AST) -> list[ast.BinOp]:
    out: list[ast.BinOp] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.BinOp):
            out.append(node)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def bound_reduction(code: str) -> BoundReduction | None:
    """The first formula of ``code`` (sums, differences and products only) that reduces
    columns of a table (``.sum()`` or ``.mean()``, one kind, each on a plain column) and
    reads another column of that table as a per-row term, with its rewrite; None if
    there is none or the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for formula in _outermost_formulas(tree):
        operators = [n.op for n in ast.walk(formula) if isinstance(n, ast.BinOp)]
        if not all(isinstance(op, _TERMS) for op in operators):
            continue
        reduced = [_reduced(n) for n in ast.walk(formula) if _reducer_call(n)]
        if None in reduced or len(set(reduced)) != 1:
            continue  # a reduction of something else than a plain column, or two kinds
        ((table, reducer),) = set(reduced)
        if table not in _bare_columns(formula):
            continue
        inner = _Unreduce().visit(ast.parse(ast.unparse(formula), mode="eval")).body
        rewrite = f"({ast.unparse(inner)}).{reducer}()"
        return BoundReduction(
            table=table, reducer=reducer, written=ast.unparse(formula), rewrite=rewrite
        )
    return None
