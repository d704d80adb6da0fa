"""A flat amount multiplied by a per-row quantity.

"A returned sale carries a flat disposal charge of 1.20" is 1.20 for each returned sale,
whatever the sale held; ``returned['trays'] * returned['tray_price'] * 1.20`` makes it
1.20 per unit of the takings instead, and runs without a word. `scaled_amounts` reads it
from a cell's code alone: a product of one of the task's flat amounts
(`stateguard.question.amounts`) and an expression over columns of a table
(``t['c']``, ``t.c``) that calls nothing. A count (``len(t)``, ``t['c'].count()``), a
condition (``(t['s'] == 'returned') * 1.20``) or a reduction is no per-row quantity, and
is left alone; a column of 0s and 1s, which the caller reads in the session, is a
condition too.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import frame_column


class ScaledAmount(BaseModel):
    """``expression * amount`` in a cell, where ``amount`` is flat."""

    model_config = ConfigDict(frozen=True)

    line: int
    expression: str
    """The per-row quantity the amount multiplies, as written."""
    amount: float
    columns: tuple[tuple[str, str], ...]
    """The (frame, column) pairs the quantity reads."""


def _number(node: ast.expr) -> float | None:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    return None


def _per_row(node: ast.expr) -> list[tuple[str, str]] | None:
    """The columns ``node`` reads when it is a quantity per row: column selections
    combined by arithmetic, with no call and no comparison; None otherwise."""
    if any(isinstance(n, ast.Call | ast.Compare | ast.BoolOp) for n in ast.walk(node)):
        return None
    found = frame_column(node)
    if found is not None:
        return [found]
    if isinstance(node, ast.BinOp):
        left, right = _per_row(node.left), _per_row(node.right)
        if left is None and _number(node.left) is None:
            return None
        if right is None and _number(node.right) is None:
            return None
        return [*(left or []), *(right or [])] or None
    if isinstance(node, ast.UnaryOp):
        return _per_row(node.operand)
    return None


def scaled_amounts(code: str, amounts: Iterable[float]) -> list[ScaledAmount]:
    """Each product of a flat amount and a per-row quantity in ``code`` (see the
    module), in order; none when the code does not parse."""
    values = list(amounts)
    if not values:
        return []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[ScaledAmount] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        for amount_side, other in ((node.right, node.left), (node.left, node.right)):
            value = _number(amount_side)
            if value is None or not any(math.isclose(value, v) for v in values):
                continue
            columns = _per_row(other)
            if columns:
                out.append(
                    ScaledAmount(
                        line=node.lineno,
                        expression=ast.unparse(other),
                        amount=value,
                        columns=tuple(dict.fromkeys(columns)),
                    )
                )
            break
    return sorted(out, key=lambda s: s.line)


class _OncePerRow(ast.NodeTransformer):
    """Replaces one product ``quantity * amount`` by ``quantity * 0 + amount``: the amount
    once for each row, with the quantity's index (so what the cell does next with it, a
    sum or a grouping, still runs)."""

    def __init__(self, found: ScaledAmount) -> None:
        self.found = found
        self.done = False

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        if self.done or node.lineno != self.found.line or not isinstance(node.op, ast.Mult):
            return self.generic_visit(node)  # type: ignore[return-value]
        for amount_side, other in ((node.right, node.left), (node.left, node.right)):
            value = _number(amount_side)
            if (
                value is not None
                and math.isclose(value, self.found.amount)
                and ast.unparse(other) == self.found.expression
            ):
                self.done = True
                zeroed = ast.BinOp(left=other, op=ast.Mult(), right=ast.Constant(0))
                return ast.BinOp(left=zeroed, op=ast.Add(), right=amount_side)
        return self.generic_visit(node)  # type: ignore[return-value]


def _reruns_alike(tree: ast.Module) -> bool:
    """Whether running the cell again gives what it gave the first time: no augmented
    assignment, and no assignment whose value reads its own target (``x = x + 1``,
    ``t['a'] = t['a'] * 2``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.AugAssign):
            return False
        if isinstance(node, ast.Assign):
            value = {ast.unparse(n) for n in ast.walk(node.value) if isinstance(n, ast.expr)}
            if any(ast.unparse(t) in value for t in node.targets):
                return False
    return True


def once_per_row(code: str, found: ScaledAmount) -> str | None:
    """``code`` with the amount of ``found`` charged once per row instead of scaled by the
    quantity (see `_OncePerRow`), to run again in a probe; None when the cell does not
    parse, the product is not found, or running the cell again would not start from what
    it started from (it updates a value from itself)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if not _reruns_alike(tree):
        return None
    rewrite = _OncePerRow(found)
    changed = rewrite.visit(tree)
    if not rewrite.done:
        return None
    return ast.unparse(ast.fix_missing_locations(changed))
