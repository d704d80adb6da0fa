"""Static def/use analysis of one cell, on stdlib `ast` only.

`analyze_cell(source)` returns, for every top-level statement in order, the
module-level (global) names it reads, binds, deletes and may mutate in place,
the global names it calls, and for every function/class/lambda it defines the
globals its body reads and writes when it is *called*.

Scoping invariants (Python's own rules, which this visitor mirrors):

* A name bound anywhere in a function body is local to the whole body unless
  declared ``global``/``nonlocal``; parameters are local.
* Names free in a function resolve to the nearest enclosing *function* scope
  that binds them, else to the module. Class scopes are skipped when methods
  resolve names.
* Comprehension targets are local to the comprehension; only its first
  iterable is evaluated in the enclosing scope; a walrus inside a comprehension
  binds in the nearest enclosing non-comprehension scope.
* A function body is not evaluated at ``def`` time: only decorators, defaults
  and annotations are reads of the ``def`` statement. Body globals become reads
  when the function is called (resolved by the runtime pass).
* A class body *is* evaluated at definition time: its free names are reads of
  the ``class`` statement; method bodies are recorded as the class's callees.
* ``x += 1`` reads and writes ``x``; ``x[i] = v``, ``x.a = v``, ``del x[i]``,
  ``x[i] += v`` read ``x`` and mutate it; imports bind names.

Within a top-level statement, a load of a name already bound earlier (in
source order) by the same statement is not a read from outside it.
"""

from __future__ import annotations

import ast

from stateguard.lineage._visitor import _StatementVisitor
from stateguard.lineage.facts import (
    INPLACE_METHODS,
    Access,
    CellAnalysis,
    FunctionInfo,
    StatementInfo,
)

__all__ = [
    "INPLACE_METHODS",
    "Access",
    "CellAnalysis",
    "FunctionInfo",
    "StatementInfo",
    "analyze_cell",
    "analyze_statement",
    "analyze_tree",
]


def _simple_assign(stmt: ast.stmt, index: int) -> StatementInfo | None:
    """`name = <names, constants and operators>` (the commonest statement), without the
    visitor; None for anything else. Gives exactly what the visitor gives."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if type(target) is not ast.Name:
        return None
    loads: list[str] = []
    stack: list[ast.AST] = [stmt.value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            loads.append(node.id)  # type: ignore[attr-defined]
        elif kind is ast.Constant:
            continue
        elif kind is ast.BinOp:
            stack.append(node.right)  # type: ignore[attr-defined]
            stack.append(node.left)  # type: ignore[attr-defined]
        elif kind is ast.UnaryOp:
            stack.append(node.operand)  # type: ignore[attr-defined]
        elif kind is ast.Compare:
            stack.extend(reversed(node.comparators))  # type: ignore[attr-defined]
            stack.append(node.left)  # type: ignore[attr-defined]
        else:
            return None
    new = tuple.__new__  # Access(...) without its keyword-handling constructor
    accesses = [new(Access, ("read", n, (), True, None, None, False)) for n in loads]
    accesses.append(
        new(Access, ("bind", target.id, (), True, None, tuple(range(len(loads))), False))
    )
    return StatementInfo.build(
        {
            "index": index,
            "lineno": stmt.lineno,
            "end_lineno": stmt.end_lineno or stmt.lineno,
            "reads": tuple(dict.fromkeys(loads)),
            "writes": (target.id,),
            **_NOTHING_ELSE,
            "accesses": tuple(accesses),
        }
    )


_NOTHING_ELSE: dict[str, object] = {
    "deletes": (),
    "mutates": (),
    "method_receivers": (),
    "inplace_calls": (),
    "store_keys": (),
    "calls": (),
    "method_calls": (),
    "functions": (),
    "star_import": False,
    "call_args": (),
    "guards": (),
}
"""The fields of a plain ``name = expression`` statement that are always empty."""


def analyze_statement(stmt: ast.stmt, index: int) -> StatementInfo:
    """Def/use facts of one top-level statement."""
    fast = _simple_assign(stmt, index)
    if fast is not None:
        return fast
    return _visited(stmt, index)


def _visited(stmt: ast.stmt, index: int) -> StatementInfo:
    v = _StatementVisitor()
    v.visit(stmt)
    # every field is built here from typed values; skip validation
    return StatementInfo.build(
        {
            "index": index,
            "lineno": stmt.lineno,
            "end_lineno": stmt.end_lineno or stmt.lineno,
            "reads": tuple(v.reads),
            "writes": tuple(v.writes),
            "deletes": tuple(v.deletes),
            "mutates": tuple(v.mutates),
            "method_receivers": tuple(v.receivers),
            "inplace_calls": tuple(v.inplace),
            "store_keys": tuple(dict.fromkeys(v.store_keys)),
            "calls": tuple(v.calls),
            "method_calls": tuple(v.method_calls),
            "functions": tuple(v.functions),
            "star_import": v.star_import,
            "accesses": tuple(v.accesses),
            "call_args": tuple(v.call_args),
            "guards": tuple(v.guards),
        }
    )


def analyze_cell(source: str) -> CellAnalysis:
    """Static def/use analysis of a cell's (already IPython-transformed) source.

    A syntax error yields an analysis with no statements and `syntax_error`
    set: a cell that cannot be compiled runs nothing and changes no lineage.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return CellAnalysis(syntax_error=f"{type(exc).__name__}: {exc}")
    return analyze_tree(tree)


def analyze_tree(tree: ast.Module) -> CellAnalysis:
    """`analyze_cell` of an already parsed cell (the tree is not changed)."""
    statements: list[StatementInfo] = []
    plain: list[int] = []
    for i, stmt in enumerate(tree.body):
        fast = _simple_assign(stmt, i)
        if fast is not None:
            plain.append(i)
        statements.append(fast if fast is not None else _visited(stmt, i))
    return CellAnalysis.model_construct(
        statements=tuple(statements), syntax_error=None, plain=tuple(plain)
    )
