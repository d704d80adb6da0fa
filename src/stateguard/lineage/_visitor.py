"""The scoped visitor: resolves every name of one top-level statement."""

from __future__ import annotations

import ast
import re

from stateguard.lineage._scopes import (
    _args_names,
    _body_binder,
    _FunctionRecord,
    _root_name,
    _Scope,
    _target_names,
)
from stateguard.lineage.facts import INPLACE_METHODS, FunctionInfo

_QUERY_REF = re.compile(r"@([A-Za-z_]\w*)")


class _StatementVisitor(ast.NodeVisitor):
    """Visits one top-level statement, resolving every name against scopes."""

    def __init__(self) -> None:
        self.scopes: list[_Scope] = [_Scope("module")]
        self.records: list[_FunctionRecord] = []  # enclosing deferred bodies
        self.reads: dict[str, None] = {}
        self.writes: dict[str, None] = {}
        self.deletes: dict[str, None] = {}
        self.mutates: dict[str, None] = {}
        self.store_keys: list[tuple[str, str | None]] = []
        self.receivers: dict[str, None] = {}
        self.method_calls: dict[tuple[str, str], None] = {}
        self.inplace: dict[str, None] = {}
        self.calls: dict[str, None] = {}
        self.functions: list[FunctionInfo] = []
        self.star_import = False

    # -- resolution -------------------------------------------------------

    def _is_global(self, name: str) -> bool:
        """Whether a load/store of `name` here refers to the module namespace."""
        innermost_non_comp = True
        for scope in reversed(self.scopes):
            if scope.kind == "comp":
                if name in scope.locals:
                    return False
                continue
            if scope.kind == "function":
                if name in scope.globals:
                    return True
                if name in scope.locals:
                    return False
            elif scope.kind == "class":
                # class bodies are visible only to code directly inside them
                if innermost_non_comp and name in scope.locals:
                    return False
            elif scope.kind == "module":
                return True
            innermost_non_comp = False
        return True

    @property
    def _deferred(self) -> bool:
        return bool(self.records)

    def _load(self, name: str) -> None:
        if not self._is_global(name):
            return
        if self._deferred:
            for rec in self.records:
                rec.reads.setdefault(name)
        elif name not in self.writes:
            self.reads.setdefault(name)

    def _store(self, name: str) -> None:
        if len(self.scopes) == 1:  # module level, the common case
            self.writes.setdefault(name)
            return
        inner = next((sc for sc in reversed(self.scopes) if sc.kind != "comp"), None)
        if inner is not None and inner.kind == "class":
            # class bodies bind as they run: a read before this line is a global read
            inner.locals.add(name)
            return
        if not self._is_global(name):
            return
        if self._deferred:
            for rec in self.records:
                rec.writes.setdefault(name)
        else:
            self.writes.setdefault(name)

    def _delete(self, name: str) -> None:
        if self._is_global(name) and not self._deferred:
            self.deletes.setdefault(name)

    def _mark(self, bucket: dict[str, None], node: ast.AST) -> None:
        root = _root_name(node)
        if root is not None and self._is_global(root) and not self._deferred:
            bucket.setdefault(root)

    # -- names ------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._load(node.id)
        elif isinstance(node.ctx, ast.Store):
            self._store(node.id)
        else:
            self._delete(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        lam = node.value if isinstance(node.value, ast.Lambda) else None
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if lam is not None and names and not self._deferred and len(names) == len(node.targets):
            # `f = lambda ...`: a definition, its body runs when f is called
            self._visit_function_like(lam, names[-1], lam.body)
        else:
            self.visit(node.value)
        for t in node.targets:
            self._visit_target(t)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._visit_target(node.target)
        if not isinstance(node.target, ast.Name):
            self.visit(node.annotation)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._load(node.target.id)
            self._store(node.target.id)
        else:
            self.visit(node.target.value)  # type: ignore[attr-defined]
            if isinstance(node.target, ast.Subscript):
                self.visit(node.target.slice)
            self._mark(self.mutates, node.target)
            self._store_key(node.target)

    def _visit_target(self, t: ast.AST) -> None:
        if isinstance(t, ast.Name):
            self._store(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for elt in t.elts:
                self._visit_target(elt)
        elif isinstance(t, ast.Starred):
            self._visit_target(t.value)
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            # x.a = v / x[i] = v: reads x (and i), mutates x
            self.visit(t.value)
            if isinstance(t, ast.Subscript):
                self.visit(t.slice)
            self._mark(self.mutates, t)
            self._store_key(t)

    def _store_key(self, t: ast.Attribute | ast.Subscript) -> None:
        root = _root_name(t)
        if root is None or not self._is_global(root) or self._deferred:
            return
        key: str | None = None
        if isinstance(t.value, ast.Name):
            if isinstance(t, ast.Attribute):
                key = f".{t.attr}"
            elif isinstance(t.slice, ast.Constant):
                key = f"[{t.slice.value!r}]"
        self.store_keys.append((root, key))

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self._delete(t.id)
            elif isinstance(t, (ast.Attribute, ast.Subscript)):
                self.visit(t.value)
                if isinstance(t, ast.Subscript):
                    self.visit(t.slice)
                self._mark(self.mutates, t)
                self._store_key(t)
            else:
                self.visit(t)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._visit_target(node.target)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_If(self, node: ast.If) -> None:
        # a write in one branch does not hide a read in the other
        self.visit(node.test)
        before = dict(self.writes)
        for stmt in node.body:
            self.visit(stmt)
        after_body = self.writes
        self.writes = dict(before)
        for stmt in node.orelse:
            self.visit(stmt)
        after_body.update(self.writes)
        self.writes = after_body

    def visit_withitem(self, node: ast.withitem) -> None:
        self.visit(node.context_expr)
        if node.optional_vars is not None:
            self._visit_target(node.optional_vars)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._store(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        # a walrus binds in the nearest non-comprehension scope
        saved = self.scopes
        self.scopes = [s for s in saved if s.kind != "comp"]
        try:
            self._visit_target(node.target)
        finally:
            self.scopes = saved

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._store(a.asname or a.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            if a.name == "*":
                self.star_import = True
            else:
                self._store(a.asname or a.name)

    def visit_Global(self, node: ast.Global) -> None:  # module-level `global`: no-op
        return

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self._store(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._store(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self._store(node.rest)

    # -- calls ------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and self._is_global(func.id) and not self._deferred:
            self.calls.setdefault(func.id)
        elif isinstance(func, ast.Attribute):
            self._mark(self.receivers, func.value)
            if (
                isinstance(func.value, ast.Name)
                and self._is_global(func.value.id)
                and not self._deferred
            ):
                self.method_calls.setdefault((func.value.id, func.attr))
            if (
                func.attr in ("query", "eval")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                # pandas resolves @name in query/eval strings from the caller's namespace
                for ref in _QUERY_REF.findall(node.args[0].value):
                    self._load(ref)
            inplace_kw = any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            if inplace_kw or func.attr in INPLACE_METHODS:
                self._mark(self.inplace, func.value)
        self.generic_visit(node)

    # -- nested scopes ----------------------------------------------------

    def _visit_function_like(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        name: str | None,
        body: list[ast.stmt] | ast.expr,
    ) -> None:
        args = node.args
        for d in [*args.defaults, *args.kw_defaults]:
            if d is not None:
                self.visit(d)
        if not isinstance(node, ast.Lambda):
            for d in node.decorator_list:
                self.visit(d)
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    self.visit(a.annotation)
            if node.returns is not None:
                self.visit(node.returns)
        binder = _body_binder(body)
        local_names = (set(_args_names(args)) | binder.bound) - binder.globals - binder.nonlocals
        scope = _Scope("function", local_names, binder.globals, binder.nonlocals)
        # a lambda used inline runs now; a def or a named lambda runs when called
        record = _FunctionRecord(name) if name is not None else None
        self.scopes.append(scope)
        if record is not None:
            self.records.append(record)
        try:
            for stmt in body if isinstance(body, list) else [body]:
                self.visit(stmt)
        finally:
            self.scopes.pop()
            if record is not None:
                self.records.pop()
        if record is not None and len(self.records) == 0:
            self.functions.append(record.freeze())

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._visit_function_like(node, node.name, node.body)
        self._store(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        # inline lambda (an argument, a key=...): assume it runs within the statement
        self._visit_function_like(node, None, node.body)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(d)
        record = _FunctionRecord(node.name)
        self.scopes.append(_Scope("class", set()))
        try:
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    # methods run when the class or its instances are used
                    self.records.append(record)
                    try:
                        self._visit_function_like(stmt, None, stmt.body)
                    finally:
                        self.records.pop()
                else:
                    self.visit(stmt)
        finally:
            self.scopes.pop()
        if not self.records:
            self.functions.append(record.freeze())
        self._store(node.name)

    def _visit_comp(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> None:
        gens = node.generators
        # the first iterable is evaluated in the enclosing scope
        self.visit(gens[0].iter)
        targets = {n for g in gens for n in _target_names(g.target)}
        self.scopes.append(_Scope("comp", targets))
        try:
            for i, g in enumerate(gens):
                if i:
                    self.visit(g.iter)
                for cond in g.ifs:
                    self.visit(cond)
            if isinstance(node, ast.DictComp):
                self.visit(node.key)
                self.visit(node.value)
            else:
                self.visit(node.elt)
        finally:
            self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comp
