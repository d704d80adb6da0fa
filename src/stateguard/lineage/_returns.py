"""What a function's return value depends on (pure `ast`).

`return_reads(fn)` gives the module-level names whose values can flow into what a
function returns: the globals its ``return`` expressions read, through the locals they
read (transitively), the tests and loops that decide which ``return`` runs and what the
locals hold, and anything passed with a local to a call (the call may change the local).
A global the body only logs or prints (``logging.info(level)``) does not flow into it.

It is conservative: None (every global the body reads) for a generator, a body with a
``try`` (which ``return`` runs then depends on what raised), nested functions or
classes, ``global``/``nonlocal`` declarations, or anything it does not model.
"""

from __future__ import annotations

import ast

from stateguard.lineage._scopes import _args_names, _body_binder

_UNMODELLED = (
    ast.Try, ast.Yield, ast.YieldFrom, ast.Await, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef, ast.Lambda, ast.Global, ast.Nonlocal, ast.Match, ast.NamedExpr,
)  # fmt: skip
_TRY_STAR = getattr(ast, "TryStar", ast.Try)


def return_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """Globals that can flow into `fn`'s return value, or None when not known."""
    found = return_flow(fn)
    return None if found is None else found[0]


def return_flow(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...] | None] | None:
    """`return_reads`, and when every ``return`` gives a tuple of the same length
    (``return a, b``), the globals that can flow into each of its items."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return None
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if isinstance(node, (*_UNMODELLED, _TRY_STAR)):
                return None
    params = set(_args_names(fn.args))
    local = _body_binder(fn.body).bound | params
    deps: dict[str, set[str]] = {n: set() for n in local}
    control: set[str] = set()  # every test and loop of the body (decides what runs)
    returns: list[ast.expr] = []
    flows: list[tuple[list[str], ast.AST]] = []  # (local targets, value) pairs

    def targets(node: ast.AST) -> list[str]:
        return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in local]

    for stmt in fn.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.If, ast.While)):
                flows.append(([], node.test))
            elif isinstance(node, ast.For):
                flows.append((targets(node.target), node.iter))
                flows.append(([], node.iter))
            elif isinstance(node, ast.Return):
                if node.value is not None:
                    returns.append(node.value)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    flows.append((targets(t), node.value))
                    if not isinstance(t, ast.Name):
                        flows.append((targets(t), t))  # x[k] = v: x holds k too
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                if node.value is not None:
                    flows.append((targets(node.target), node.value))
                    flows.append((targets(node.target), node.target))
            elif isinstance(node, ast.With):
                for item in node.items:
                    if item.optional_vars is not None:
                        flows.append((targets(item.optional_vars), item.context_expr))
            elif isinstance(node, ast.Call):
                # a call may change the locals it is given or called on
                touched = [] if isinstance(node.func, ast.Name) else targets(node.func)
                for a in (*node.args, *(k.value for k in node.keywords)):
                    touched += targets(a)
                if touched:
                    flows.append((touched, node))
    test_nodes = [value for tgts, value in flows if not tgts]

    def reads(node: ast.AST) -> set[str]:
        out: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out |= deps[n.id] if n.id in local else {n.id}
        return out

    changed = True
    while changed:
        changed = False
        for tgts, value in flows:
            if not tgts:
                continue
            got = reads(value) | control
            for t in tgts:
                before = len(deps[t])
                deps[t] |= got
                changed = changed or len(deps[t]) != before
        new_control: set[str] = set()
        for test in test_nodes:
            new_control |= reads(test)
        if new_control - control:
            control |= new_control
            changed = True
    out: set[str] = set(control)
    for r in returns:
        out |= reads(r)
    items: tuple[tuple[str, ...], ...] | None = None
    shapes = {len(r.elts) if isinstance(r, ast.Tuple) else -1 for r in returns}
    if (
        len(shapes) == 1
        and min(shapes) > 0
        and not any(
            isinstance(e, ast.Starred)
            for r in returns
            for e in r.elts  # type: ignore[attr-defined]
        )
    ):
        per: list[set[str]] = [set(control) for _ in range(min(shapes))]
        for r in returns:
            for k, elt in enumerate(r.elts):  # type: ignore[attr-defined]
                per[k] |= reads(elt)
        items = tuple(tuple(sorted(p)) for p in per)
    return tuple(sorted(out)), items
