"""Static building blocks of part-level lineage: access paths and guarded blocks.

An *access path* is a root name followed by constant steps, read off the
syntax of ``df['a']``, ``df.a``, ``df.loc[:, 'y']``, ``d['k']['j']``,
``lst[0]`` or ``box.w``. A step is a small JSON-friendly list:

* ``["attr", name]`` — ``x.name`` (an attribute, or a column on a frame);
* ``["key", value]`` — ``x[value]`` with a constant value (a tuple becomes a list);
* ``["keys", [v, ...]]`` — ``x[[v, ...]]``, several constant keys (``df[['a', 'b']]``);
* ``["col", value]`` / ``["cols", [...]]`` — the column selected by ``.loc``/``.at``
  (``df.loc[mask, 'y']``); ``["icol", i]`` for ``.iloc``/``.iat`` positions;
* ``["elem", i]`` — the element at position ``i`` of a list, tuple or array, taken by
  unpacking (``a, b = lst``) or by a loop (its target ends on ``["elem", -1]``); on any
  other value the access reads the whole.

A path stops at the first step that is not constant (``d[k]``, ``df[cols]``,
``x[1:3]``); the access is then *inexact* and stands for the whole prefix.
The runtime pass later normalizes paths against live objects.

*Guarded blocks* are the statement runs that may not execute: the bodies of
``if``/``else``, loops, ``except`` handlers, ``try``'s ``else`` and ``case``
arms, the statements after a compound statement that can leave its block
(``return``, ``raise``, ``break``, ``continue`` inside it), and each statement
after the first of a ``try`` body (an exception skips the rest). A block is keyed by
the position of its first statement; the runtime marks each key it reaches. The last
simple statement of a ``try`` body with handlers also has an *after* key (`after_key`),
marked when it completed: a statement that raised wrote nothing.
"""

from __future__ import annotations

import ast
from typing import Any

Step = list[Any]

_LOC = {"loc": "col", "at": "col", "iloc": "icol", "iat": "icol"}
_CONSTANT_TYPES = (str, int, float, bool, type(None))


def block_key(stmt: ast.stmt) -> int:
    """The key of the guarded block starting at `stmt` (line and column)."""
    return (stmt.lineno << 12) | min(stmt.col_offset, 4095)


def after_key(stmt: ast.stmt) -> int:
    """The key of the marker placed right after `stmt` (reached when it completed)."""
    return -block_key(stmt)


def _constant(node: ast.AST) -> tuple[bool, Any]:
    """(is_constant, JSON value) for a literal key: scalars and tuples of scalars."""
    if isinstance(node, ast.Constant) and isinstance(node.value, _CONSTANT_TYPES):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        return True, -node.operand.value
    if isinstance(node, ast.Tuple):
        items = [_constant(e) for e in node.elts]
        if all(ok for ok, _ in items):
            return True, [v for _, v in items]
    return False, None


def _constant_list(node: ast.AST) -> list[Any] | None:
    if isinstance(node, ast.List) and node.elts:
        items = [_constant(e) for e in node.elts]
        if all(ok for ok, _ in items):
            return [v for _, v in items]
    return None


def access_path(node: ast.AST) -> tuple[str, list[Step], bool, list[ast.AST]] | None:
    """(root, steps, exact, other expressions) for a Name/Attribute/Subscript chain.

    `other expressions` are the non-constant parts of the chain (a mask, a
    variable index) that the caller still visits as ordinary reads. None when
    the chain does not start at a plain name (``f()['a']``).
    """
    chain: list[ast.AST] = []
    cur = node
    while isinstance(cur, (ast.Attribute, ast.Subscript)):
        chain.append(cur)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return None
    steps: list[Step] = []
    others: list[ast.AST] = []
    exact = True
    chain.reverse()
    i = 0
    while i < len(chain):
        link = chain[i]
        if not exact:
            if isinstance(link, ast.Subscript):
                others.append(link.slice)
            i += 1
            continue
        if isinstance(link, ast.Attribute):
            nxt = chain[i + 1] if i + 1 < len(chain) else None
            if link.attr in _LOC and isinstance(nxt, ast.Subscript):
                step = _loc_step(_LOC[link.attr], nxt.slice, others)
                if step is None:
                    exact = False
                else:
                    steps.append(step)
                i += 2
                continue
            steps.append(["attr", link.attr])
        else:
            assert isinstance(link, ast.Subscript)
            ok, value = _constant(link.slice)
            many = None if ok else _constant_list(link.slice)
            if ok:
                steps.append(["key", value])
            elif many is not None:
                steps.append(["keys", many])  # normalization stops after several parts
            else:
                others.append(link.slice)
                exact = False
                if _is_label_expr(link.slice):
                    steps.append(["label"])  # one label, not known before the cell runs
        i += 1
    return cur.id, steps, exact, others


def _is_label_expr(node: ast.AST) -> bool:
    """An expression that always gives one string label: an f-string, ``'c' + s``."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return any(
            (isinstance(side, ast.Constant) and isinstance(side.value, str)) or _is_label_expr(side)
            for side in (node.left, node.right)
        )
    return False


def _loc_step(kind: str, sl: ast.AST, others: list[ast.AST]) -> Step | None:
    """The column step of ``.loc[rows, col]``; None when the column is not constant."""
    if not isinstance(sl, ast.Tuple) or len(sl.elts) != 2:
        others.append(sl)
        return None
    rows, col = sl.elts
    if not (isinstance(rows, ast.Slice) and rows.lower is None and rows.upper is None):
        others.append(rows)
    ok, value = _constant(col)
    if ok and not isinstance(value, list):
        return [kind, value]
    many = _constant_list(col)
    if many is not None and kind == "col":
        return ["cols", many]
    others.append(col)
    return None


# -- guarded blocks -------------------------------------------------------------

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _may_leave(stmt: ast.stmt) -> bool:
    """Whether a compound statement contains a return/raise/break/continue of its own."""
    if not isinstance(
        stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith)
    ) and not isinstance(stmt, (getattr(ast, "TryStar", ast.Try), ast.Match)):
        return False
    todo: list[ast.AST] = list(ast.iter_child_nodes(stmt))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return True
        if isinstance(node, _DEFS):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


def block_heads(body: list[ast.stmt], conditional: bool, every: bool = False) -> list[int]:
    """Indexes in `body` where a guarded block starts (`every`: each statement after the
    first, as in a ``try`` body, where any statement may raise past the rest)."""
    heads = [0] if conditional and body else []
    for i in range(1, len(body)):
        if every or _may_leave(body[i - 1]):
            heads.append(i)
    return heads


def has_break(body: list[ast.stmt]) -> bool:
    """Whether a loop body contains a ``break`` of its own loop."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, (*_DEFS, ast.For, ast.AsyncFor, ast.While)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False
