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
    CellAnalysis,
    FunctionInfo,
    StatementInfo,
)

__all__ = [
    "INPLACE_METHODS",
    "CellAnalysis",
    "FunctionInfo",
    "StatementInfo",
    "analyze_cell",
    "analyze_statement",
    "analyze_tree",
]


def analyze_statement(stmt: ast.stmt, index: int) -> StatementInfo:
    """Def/use facts of one top-level statement."""
    v = _StatementVisitor()
    v.visit(stmt)
    # every field is built here from typed values; skip validation
    return StatementInfo.build(
        index=index,
        lineno=stmt.lineno,
        end_lineno=stmt.end_lineno or stmt.lineno,
        reads=tuple(v.reads),
        writes=tuple(v.writes),
        deletes=tuple(v.deletes),
        mutates=tuple(v.mutates),
        method_receivers=tuple(v.receivers),
        inplace_calls=tuple(v.inplace),
        store_keys=tuple(dict.fromkeys(v.store_keys)),
        calls=tuple(v.calls),
        method_calls=tuple(v.method_calls),
        functions=tuple(v.functions),
        star_import=v.star_import,
        accesses=tuple(v.accesses),
        call_args=tuple(v.call_args),
        guards=tuple(v.guards),
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
    return CellAnalysis.model_construct(
        statements=tuple(analyze_statement(s, i) for i, s in enumerate(tree.body)),
        syntax_error=None,
    )
