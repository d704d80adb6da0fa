"""One element picked by position from a Series and shown: ``s.iloc[0]``.

``pct = gp / billed * 100`` is one value per row; ``print(f"{pct.iloc[0]:.2f}")`` then
shows the first row's value, a plausible number that answers nothing asked about all
the rows. Taking the first (or last) element is right when the Series was put in order
first (``s.sort_values().iloc[-1]`` is its largest value) or holds one value; the data
tell which.

`shown_picks` reads from a cell's code the picks it shows: ``name.iloc[0]``,
``name.iat[0]`` or ``name.values[0]`` (or ``[-1]``) of a plain name, inside a statement
that shows something (a ``print``, a bare expression) or bound to a name such a statement
reads. Whether the name is a Series of many values in no order is asked of the kernel
(`stateguard.kernel.namespace.series_order`).
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

_POSITIONAL = frozenset({"iloc", "iat", "values"})
_ENDS = frozenset({0, -1})


class Pick(BaseModel):
    """``name.accessor[position]`` on line ``line`` of a cell."""

    model_config = ConfigDict(frozen=True)

    name: str
    accessor: str
    position: int
    line: int

    @property
    def expression(self) -> str:
        return f"{self.name}.{self.accessor}[{self.position}]"


def _position(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _picks(node: ast.AST) -> list[Pick]:
    out = []
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Subscript) or not isinstance(sub.value, ast.Attribute):
            continue
        attr = sub.value
        position = _position(sub.slice)
        if attr.attr in _POSITIONAL and isinstance(attr.value, ast.Name) and position in _ENDS:
            out.append(
                Pick(name=attr.value.id, accessor=attr.attr, position=position, line=sub.lineno)
            )
    return out


def _read_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def shown_picks(code: str) -> list[Pick]:
    """The positional picks ``code`` shows (see the module docstring), in order; [] for
    code that does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    shown: list[Pick] = []
    bound: dict[str, list[Pick]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Expr):
            shown += _picks(statement)
            for name in _read_names(statement):
                shown += bound.get(name, [])
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            value = statement.value
            picks = _picks(value) if value is not None else []
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = picks
    return list(dict.fromkeys(shown))
