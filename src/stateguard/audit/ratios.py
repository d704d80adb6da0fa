"""The mean of per-row ratios shown where one share was meant.

``(t['profit'] / t['billed']).mean()`` averages one ratio per row: every row weighs the
same, whatever its amounts. The share of the profit in the billed amount is the ratio of
the totals, ``t['profit'].sum() / t['billed'].sum()``, and the two differ whenever the
rows' amounts differ. Whether the question asks for one share (and not an average of
rates) is the question layer's to say (`stateguard.question`); this module only reads the
code.

`mean_of_ratios` reads the expression a cell shows last (`stateguard.audit.shown`):
``(A / B).mean()``, with a scale by a number inside or outside the mean (``* 100``) and a
``round(…)`` around it, and gives the ratio of totals the same code makes.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

from stateguard.audit.shown import shown_expression


class MeanOfRatios(BaseModel):
    """``(A / B).mean()`` shown by a cell, with its ratio of totals."""

    model_config = ConfigDict(frozen=True)

    expression: str
    """The shown mean, as written (unparsed)."""
    rewrite: str
    """``A.sum() / B.sum()``, scaled as the cell scaled the mean."""


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _unscaled(node: ast.expr) -> tuple[ast.expr, str | None]:
    """``node`` without a product by a number (``x * 100``, ``100 * x``), and the number."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        if _number(node.right):
            return node.left, ast.unparse(node.right)
        if _number(node.left):
            return node.right, ast.unparse(node.left)
    return node, None


def _total(node: ast.expr) -> str:
    text = ast.unparse(node)
    simple = isinstance(node, ast.Name | ast.Subscript | ast.Attribute | ast.Call)
    return f"{text}.sum()" if simple else f"({text}).sum()"


def mean_of_ratios(code: str) -> MeanOfRatios | None:
    """The mean of a per-row ratio the cell shows last (see the module docstring); None
    for anything else, and for code that does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    shown = shown_expression(tree)
    if (
        isinstance(shown, ast.Call)
        and isinstance(shown.func, ast.Name)
        and shown.func.id == "round"
        and shown.args
    ):
        shown = shown.args[0]
    if shown is None:
        return None
    mean, outer = _unscaled(shown)
    if not (
        isinstance(mean, ast.Call)
        and isinstance(mean.func, ast.Attribute)
        and mean.func.attr == "mean"
        and not mean.args
        and not mean.keywords
    ):
        return None
    ratio, inner = _unscaled(mean.func.value)
    if not isinstance(ratio, ast.BinOp) or not isinstance(ratio.op, ast.Div):
        return None
    if _number(ratio.left) or _number(ratio.right):
        return None  # a column scaled by a number, not a ratio of two amounts
    scale = outer or inner
    rewrite = f"{_total(ratio.left)} / {_total(ratio.right)}"
    if scale is not None:
        rewrite = f"{rewrite} * {scale}"
    return MeanOfRatios(expression=ast.unparse(mean), rewrite=rewrite)
