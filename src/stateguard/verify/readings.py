"""The step's result under the question's other reading, for a probe to compare.

A check that rests on reading the question's English (the mean asked, the median taken;
the most asked, the minimum taken; a descending order asked, an ascending sort; the
column the question names, another one read) may be corroborated by the data: the
step's last expression is rewritten as the question reads it (`swap`) and both are
evaluated in a fork of the state after the step (`namespace.results_differ`). When the
two results differ, the reading changes the answer on this data. That is all it shows:
it cannot show the English was read right.

Only a last statement that is an expression, or an assignment of one to a name, is
rewritten; nothing with ``inplace=``; a rewrite that changes nothing gives None.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import NamedTuple

OPPOSITE = {
    "max": "min",
    "idxmax": "idxmin",
    "nlargest": "nsmallest",
    "argmax": "argmin",
}
OPPOSITE |= {v: k for k, v in OPPOSITE.items()}
"""An extreme and its opposite."""


class Reading(NamedTuple):
    """A finding with what the code computes (a comparison, a result expression) as written
    and as the question reads it."""

    message: str
    written: str
    read: str


def _result(code: str) -> ast.expr | None:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    if not body:
        return None
    last = body[-1]
    if isinstance(last, ast.Expr):
        return last.value
    if (
        isinstance(last, ast.Assign)
        and len(last.targets) == 1
        and isinstance(last.targets[0], ast.Name)
    ):
        return last.value
    return None


class _Swap(ast.NodeTransformer):
    def __init__(
        self, attrs: Mapping[str, str], strings: Mapping[str, str], flip_sort: bool
    ) -> None:
        self.attrs, self.strings, self.flip_sort = attrs, strings, flip_sort

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr in self.attrs:
            node.attr = self.attrs[node.attr]
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and node.value in self.strings:
            return ast.copy_location(ast.Constant(self.strings[node.value]), node)
        if isinstance(node.value, str) and node.value in self.attrs:  # .agg('median')
            return ast.copy_location(ast.Constant(self.attrs[node.value]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if (
            self.flip_sort
            and isinstance(func, ast.Attribute)
            and func.attr in ("sort_values", "sort_index")
        ):
            asc = next((k for k in node.keywords if k.arg == "ascending"), None)
            if asc is None:
                node.keywords.append(ast.keyword("ascending", ast.Constant(False)))
            elif isinstance(asc.value, ast.Constant) and isinstance(asc.value.value, bool):
                asc.value = ast.Constant(not asc.value.value)
        return node


def swap(
    code: str,
    *,
    attrs: Mapping[str, str] | None = None,
    strings: Mapping[str, str] | None = None,
    flip_sort: bool = False,
) -> tuple[str, str] | None:
    """``(written, read)``: the step's result expression, and the same with method names
    ``attrs`` and string constants ``strings`` replaced, and with every sort's order
    flipped when ``flip_sort``; None when there is no result expression or nothing
    changes."""
    node = _result(code)
    if node is None:
        return None
    written = ast.unparse(node)
    if "inplace" in written:
        return None
    changed = _Swap(attrs or {}, strings or {}, flip_sort).visit(ast.parse(written, mode="eval"))
    read = ast.unparse(ast.fix_missing_locations(changed))
    return None if read == written else (written, read)
