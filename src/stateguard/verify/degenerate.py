"""Code whose value is fixed by its own form, whatever the data: ``x - x``, ``a / a``,
``df.k < df.k``, ``df[['a', 'a']]``. No analyst means them; a mistyped or swapped
operand does (``apple.index.min() - apple.index.min()`` for ``max() - min()``).

``x == x`` and ``x != x`` are left alone: they are the idiom for testing NaN."""

from __future__ import annotations

import ast

_SAME_OPS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.BitXor)
_SAME_CMPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)


def _is_literal(node: ast.AST) -> bool:
    return all(isinstance(n, ast.Constant | ast.UnaryOp | ast.unaryop) for n in ast.walk(node))


def _same(a: ast.AST, b: ast.AST) -> bool:
    return not _is_literal(a) and ast.dump(a) == ast.dump(b)


def degenerate(code: str) -> list[str]:
    """Each expression of ``code`` fixed by its form, as ``shown — why``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _SAME_OPS):
            if _same(node.left, node.right):
                out.append(f"`{ast.unparse(node)}` has the same operand on both sides")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], _SAME_CMPS) and _same(node.left, node.comparators[0]):
                out.append(f"`{ast.unparse(node)}` compares a value with itself")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.List):
            keys = [
                k.value
                for k in node.slice.elts
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            if twice:
                out.append(
                    f"`{ast.unparse(node)}` selects {', '.join(repr(k) for k in twice)} twice"
                )
    return out
