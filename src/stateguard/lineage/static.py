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
import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

#: Methods that mutate their receiver in place for builtin containers; used only
#: as *static evidence* of mutation where the runtime fingerprint is approximate.
INPLACE_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "sort",
        "reverse",
        "setdefault",
        "popitem",
        "add",
        "discard",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "__setitem__",
        "__delitem__",
        "fill",
        "resize",
        "put",
        "itemset",
        "setflags",
    }
)


_QUERY_REF = re.compile(r"@([A-Za-z_]\w*)")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class FunctionInfo(_Frozen):
    """What calling a function (or instantiating a class) defined in a cell touches."""

    name: str
    global_reads: tuple[str, ...] = ()
    """Module-level names the body (and nested bodies) read when it runs."""
    global_writes: tuple[str, ...] = ()
    """Module-level names the body rebinds through ``global`` declarations."""


class StatementInfo(_Frozen):
    """Def/use facts of one top-level statement of a cell."""

    index: int
    lineno: int
    end_lineno: int
    reads: tuple[str, ...] = ()
    """Global names read from outside the statement, in first-use order."""
    writes: tuple[str, ...] = ()
    """Global names (re)bound by the statement, in order."""
    deletes: tuple[str, ...] = ()
    mutates: tuple[str, ...] = ()
    """Roots of subscript/attribute stores, ``del x[..]`` and augmented stores."""
    method_receivers: tuple[str, ...] = ()
    """Roots ``x`` of calls ``x.m(...)`` (possible in-place mutation)."""
    inplace_calls: tuple[str, ...] = ()
    """Roots of calls that are in-place by convention (``inplace=True``, ``list.append``…)."""
    store_keys: tuple[tuple[str, str | None], ...] = ()
    """(root, key) for each in-place store: ``df['cost'] = ..`` gives ("df", "['cost']");
    the key is None when not a constant (``df.loc[mask, 'x']``, ``x[i]``)."""
    calls: tuple[str, ...] = ()
    """Global names called directly, ``f(...)``."""
    method_calls: tuple[tuple[str, str], ...] = ()
    """(receiver, method) for calls ``x.m(...)`` on a global name."""
    functions: tuple[FunctionInfo, ...] = ()
    """Functions, lambdas bound to a name, and classes defined by this statement."""
    star_import: bool = False


class CellAnalysis(_Frozen):
    """Static def/use facts of a whole cell."""

    statements: tuple[StatementInfo, ...] = ()
    syntax_error: str | None = None

    @property
    def reads(self) -> tuple[str, ...]:
        """Names the cell reads from the namespace it started with, in order."""
        bound: set[str] = set()
        out: dict[str, None] = {}
        for st in self.statements:
            for n in st.reads:
                if n not in bound:
                    out.setdefault(n)
            bound.update(st.writes)
        return tuple(out)

    @property
    def writes(self) -> tuple[str, ...]:
        """Names the cell binds, in order."""
        return _ordered(n for st in self.statements for n in st.writes)

    @property
    def mutates(self) -> tuple[str, ...]:
        """Names the cell syntactically mutates in place."""
        return _ordered(n for st in self.statements for n in st.mutates)

    @property
    def calls(self) -> tuple[str, ...]:
        """Global names the cell calls."""
        return _ordered(n for st in self.statements for n in st.calls)

    def function(self, name: str) -> FunctionInfo | None:
        """The last definition of `name` in this cell, if any."""
        found = None
        for st in self.statements:
            for f in st.functions:
                if f.name == name:
                    found = f
        return found


def _ordered(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


# ---------------------------------------------------------------------------
# binding sets of nested scopes


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
    __slots__ = ("name", "reads", "writes")

    def __init__(self, name: str) -> None:
        self.name = name
        self.reads: dict[str, None] = {}
        self.writes: dict[str, None] = {}

    def freeze(self) -> FunctionInfo:
        return FunctionInfo(
            name=self.name, global_reads=tuple(self.reads), global_writes=tuple(self.writes)
        )


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


def analyze_statement(stmt: ast.stmt, index: int) -> StatementInfo:
    """Def/use facts of one top-level statement."""
    v = _StatementVisitor()
    v.visit(stmt)
    # model_construct: every field is built here from typed values; skip re-validation
    return StatementInfo.model_construct(
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
    return CellAnalysis.model_construct(
        statements=tuple(analyze_statement(s, i) for i, s in enumerate(tree.body)),
        syntax_error=None,
    )
