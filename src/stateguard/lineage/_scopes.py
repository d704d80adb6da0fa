"""Scope bookkeeping for the static pass: binding sets of nested scopes."""

from __future__ import annotations

import ast

from stateguard.lineage.facts import FunctionInfo


def _target_names(node: ast.AST) -> list[str]:
    """Plain names bound by an assignment target (tuples, lists, starred)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for elt in node.elts for n in _target_names(elt)]
    if isinstance(node, ast.Starred):
        return _target_names(node.value)
    return []


def _root_name(node: ast.AST) -> str | None:
    """``x`` for ``x``, ``x.a``, ``x[i]``, ``x.a[i].b`` and ``x.m()[i]``; else None."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMP_NODES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _args_names(args: ast.arguments) -> list[str]:
    all_args = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg:
        all_args.append(args.vararg)
    if args.kwarg:
        all_args.append(args.kwarg)
    return [a.arg for a in all_args]


class _Binder(ast.NodeVisitor):
    """Collects names bound directly in one function/class body.

    Does not descend into nested function/class/lambda bodies (only their
    names, decorators and defaults); descends into comprehensions only to find
    walrus targets, which bind in this scope.
    """

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.bound.add(node.id)

    def visit_Global(self, node: ast.Global) -> None:
        self.globals.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.nonlocals.update(node.names)

    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.bound.add(node.name)
        for d in node.decorator_list:
            self.visit(d)
        if not isinstance(node, ast.ClassDef):
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if d is not None:
                    self.visit(d)
        else:
            for b in [*node.bases, *node.keywords]:
                self.visit(b)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for d in [*node.args.defaults, *node.args.kw_defaults]:
            if d is not None:
                self.visit(d)

    def _visit_comp(self, node: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                self.bound.add(sub.target.id)
            elif isinstance(sub, _SCOPE_NODES):
                # lambdas/defs inside comprehensions cannot bind here
                continue

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comp

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.bound.add(a.asname or a.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            if a.name != "*":
                self.bound.add(a.asname or a.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bound.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.bound.add(node.rest)
        self.generic_visit(node)


def _body_binder(body: list[ast.stmt] | ast.expr) -> _Binder:
    b = _Binder()
    for stmt in body if isinstance(body, list) else [body]:
        b.visit(stmt)
    return b


# ---------------------------------------------------------------------------
# the scoped visitor


class _Scope:
    """One lexical scope on the visitor's stack."""

    __slots__ = ("globals", "kind", "locals", "nonlocals")

    def __init__(
        self,
        kind: str,
        local_names: set[str] | None = None,
        global_names: set[str] | None = None,
        nonlocal_names: set[str] | None = None,
    ) -> None:
        self.kind = kind  # "module" | "function" | "class" | "comp"
        self.locals = local_names or set()
        self.globals = global_names or set()
        self.nonlocals = nonlocal_names or set()


class _FunctionRecord:
    __slots__ = ("entry_guard", "guarded", "name", "reads", "track_guards", "writes")

    def __init__(self, name: str, *, track_guards: bool = True) -> None:
        self.name = name
        self.reads: dict[str, None] = {}
        self.writes: dict[str, None] = {}
        self.guarded: dict[tuple[str, int | None], None] = {}
        self.track_guards = track_guards
        self.entry_guard: int | None = None
        """The guard in effect (in the enclosing record's body) where this body starts."""

    def freeze(self) -> FunctionInfo:
        return FunctionInfo(
            name=self.name,
            global_reads=tuple(self.reads),
            global_writes=tuple(self.writes),
            guarded_reads=tuple(self.guarded) if self.track_guards else (),
        )
