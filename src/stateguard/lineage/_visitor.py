"""The scoped visitor: resolves every name of one top-level statement."""

from __future__ import annotations

import ast
import re

from stateguard.lineage._frames import read_model, rows_model
from stateguard.lineage._paths import (
    access_path,
    after_key,
    block_heads,
    block_key,
    has_break,
)
from stateguard.lineage._returns import return_flow
from stateguard.lineage._scopes import (
    _args_names,
    _body_binder,
    _FunctionRecord,
    _root_name,
    _Scope,
    _target_names,
)
from stateguard.lineage.facts import INPLACE_METHODS, Access, FunctionInfo

_QUERY_REF = re.compile(r"@([A-Za-z_]\w*)")

#: Methods that change their receiver without reading what is already in it.
_WRITE_ONLY_METHODS = frozenset({"append", "extend", "insert", "add", "update", "clear"})


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
        self.accesses: list[Access] = []
        self.call_args: dict[tuple[str, str], None] = {}
        self.guard: int | None = None
        self.write_guard: int | None = None  # the writes of a try-body statement: it completed
        self.guards: list[int] = []
        self.control: list[tuple[int, ...]] = []  # reads of enclosing tests (control flow)
        self.inner_flow = False  # a value read a name bound earlier in this statement
        self._target: tuple[int, str] | None = None  # (value node id, name it is bound to)
        self.computed: dict[str, tuple[int, ...]] = {}  # column -> reads, of the last chain
        # loop target -> body block key, for `for i in range(..)` loops whose body keeps i
        self.range_targets: dict[str, int] = {}

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

    def _load(self, name: str, path: tuple[list, ...] = (), exact: bool = True) -> None:
        if not self._is_global(name):
            return
        if self._deferred:
            for i, rec in enumerate(self.records):
                rec.reads.setdefault(name)
                if rec.track_guards:
                    inner = self.records[i + 1] if i + 1 < len(self.records) else None
                    guard = self.guard if inner is None else inner.entry_guard
                    rec.guarded.setdefault((name, guard))
        elif name in self.writes:
            self.inner_flow = True
            self.accesses.append(Access("flow", name, (), True, self.guard, None, False))
        else:
            self.reads.setdefault(name)
            self.accesses.append(Access("read", name, path, exact, self.guard, None, False))

    def _access(
        self,
        kind: str,
        name: str,
        path: tuple[list, ...] = (),
        exact: bool = True,
        deps: tuple[int, ...] | None = None,
        literal: bool = False,
    ) -> None:
        guard = self.guard if self.write_guard is None else self.write_guard
        self.accesses.append(Access(kind, name, path, exact, guard, deps, literal))

    def _reads_since(self, start: int) -> tuple[int, ...]:
        return tuple(i for i in range(start, len(self.accesses)) if self.accesses[i].kind == "read")

    def _with_control(self, deps: tuple[int, ...] | None) -> tuple[int, ...] | None:
        """A value's own reads plus the tests that decided it was computed."""
        if deps is None or self.inner_flow:
            return None  # flows inside the statement: every read of it counts
        return tuple(dict.fromkeys((*deps, *(i for c in self.control for i in c))))

    def _test(self, node: ast.AST) -> tuple[int, ...]:
        start = len(self.accesses)
        self.visit(node)
        return self._reads_since(start)

    def _store(self, name: str, deps: tuple[int, ...] | None = None) -> None:
        if len(self.scopes) == 1:  # module level, the common case
            self.writes.setdefault(name)
            self._access("bind", name, deps=deps)
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
            self._access("bind", name, deps=deps)

    def _delete(self, name: str) -> None:
        if self._is_global(name) and not self._deferred:
            self.deletes.setdefault(name)
            self._access("delete", name)

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

    def _visit_chain(self, node: ast.Attribute | ast.Subscript) -> None:
        found = access_path(node)
        if found is None:
            self.generic_visit(node)
            return
        root, steps, exact, others = found
        for other in others:
            self.visit(other)
        self._load(root, tuple(steps), exact)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            if not self._frame_chain(node):
                self._visit_chain(node)
        else:
            self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        base = node.value
        if (
            self.range_targets
            and isinstance(node.ctx, ast.Load)
            and isinstance(base, ast.Name)
            and isinstance(node.slice, ast.Name)
            and node.slice.id in self.range_targets
            and not self._deferred
            and self._is_global(base.id)
            and base.id not in self.writes
        ):
            # lst[i] in `for i in range(..)`: the positions the loop ran over (runtime)
            self._load(base.id, (["range", self.range_targets[node.slice.id]],), False)
            self.visit(node.slice)
            return
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(base, ast.Name)
            and isinstance(node.slice, ast.Name)
            and not self._deferred
            and self._is_global(base.id)
            and self._is_global(node.slice.id)
            and base.id not in self.writes
            and node.slice.id not in self.writes
            and node.slice.id not in self.range_targets
        ):
            # lst[i], d[k] with a name as the index: the runtime reads the name's value
            # (when the cell does not rebind it) and resolves the part
            self._load(base.id, (["var", node.slice.id],), False)
            self.visit(node.slice)
            return
        call = node.value
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and type(_constant_key(node.slice)) is int
            and not self._deferred
            and self._is_global(call.func.id)
            and call.func.id not in self.writes
        ):
            # f()[1]: the item of what f returns (the runtime knows what flows into it)
            self._call_facts(call)
            self._load(call.func.id, (["ret", _constant_key(node.slice)],), True)
            for a in (*call.args, *(k.value for k in call.keywords)):
                self.visit(a)
            return
        if isinstance(node.ctx, ast.Load):
            if not self._frame_chain(node):
                self._visit_chain(node)
        else:
            self.generic_visit(node)

    def _frame_chain(self, node: ast.AST, rows_of: bool = False) -> bool:
        """Read a pandas chain through the frame model (`lineage._frames`): the columns
        and rows it uses, not the whole frame. False when the model does not apply."""
        if self._deferred:
            return False
        target = self._target[1] if self._target and self._target[0] == id(node) else None
        found = rows_model(node) if rows_of else read_model(node, target)
        if found is None or not self._is_global(found.reads[0][0]):
            return False
        for call in found.calls:
            self._call_facts(call)
        computed_nodes = {id(v): c for c, v in found.computed}
        own: list[int] = []
        computed: dict[str, tuple[int, ...]] = {}
        for root, path in found.reads:
            start = len(self.accesses)
            self._load(root, path, True)
            if not (path and path[0][0] == "carry"):
                own.extend(self._reads_since(start))
        for other in found.others:
            start = len(self.accesses)
            self.visit(other)
            if id(other) in computed_nodes:
                computed[computed_nodes[id(other)]] = self._reads_since(start)
            else:
                own.extend(self._reads_since(start))
        if target is not None:
            # a computed column depends on its own value and on what chose the rows
            self.computed = {c: (*deps, *own) for c, deps in computed.items()}
        return True

    def visit_Assign(self, node: ast.Assign) -> None:
        lam = node.value if isinstance(node.value, ast.Lambda) else None
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if lam is not None and names and not self._deferred and len(names) == len(node.targets):
            # `f = lambda ...`: a definition, its body runs when f is called
            self._visit_function_like(lam, names[-1], lam.body)
            for t in node.targets:
                self._visit_target(t)
            return
        if len(node.targets) == 1 and not self._deferred:
            self._assign_paired(node.targets[0], node.value)
            return
        self.visit(node.value)
        for t in node.targets:
            self._visit_target(t)

    def _assign_paired(self, target: ast.AST, value: ast.AST) -> None:
        """``a, b = p, q`` element-wise; ``cfg = {'p': p}`` with a dependency per key."""
        flow, self.inner_flow = self.inner_flow, False
        pairs = _pair(target, [value])
        if pairs is None and self._unpack_elements(target, value):
            self.inner_flow = flow
            return
        if pairs is None:
            start = len(self.accesses)
            parts = self._literal_parts(target, value)
            if parts is None:
                if isinstance(target, ast.Name):
                    self._target, self.computed = (id(value), target.id), {}
                self.visit(value)
                self._target = None
                own = self._reads_since(start) if isinstance(target, ast.Name) else None
                self._visit_target(target, self._with_control(own))
                if isinstance(target, ast.Name):
                    # df2 = df.assign(z=..): each computed column with its own reads
                    for col, col_deps in self.computed.items():
                        deps = self._with_control(col_deps)
                        if deps is not None:
                            self._access("store", target.id, (["key", col],), True, deps, True)
                    self.computed = {}
            else:
                assert isinstance(target, ast.Name)
                self._visit_target(target, self._with_control(self._reads_since(start)))
                for step, part_deps in parts:
                    deps = self._with_control(part_deps)
                    if deps is None:
                        continue  # no narrowing possible: the whole literal is one value
                    self._access("store", target.id, (step,), True, deps, literal=True)
        else:
            bound: list[tuple[ast.AST, tuple[int, ...]]] = []
            for t, values in pairs:
                start = len(self.accesses)
                for v in values:
                    self.visit(v)
                bound.append((t, self._reads_since(start)))
            resolved = [(t, self._with_control(deps)) for t, deps in bound]
            for t, deps in resolved:
                self._visit_target(t, deps)
        self.inner_flow = flow

    def _unpack_elements(self, target: ast.AST, value: ast.AST) -> bool:
        """``a, b = lst``: each name reads its own element of the value (the runtime reads
        the whole value where it is not a list, tuple or array). False when not that shape."""
        if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(
            value, (ast.Name, ast.Attribute, ast.Subscript)
        ):
            return False
        found = access_path(value)
        elts = target.elts
        stars = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
        if found is None or not found[2] or found[3] or len(stars) > 1 or self._deferred:
            return False
        if not all(isinstance(e, (ast.Name, ast.Starred)) for e in elts):
            return False
        root, steps, _exact, _others = found
        if not self._is_global(root) or root in self.writes:
            return False
        star = stars[0] if stars else len(elts)
        for i, elt in enumerate(elts):
            start = len(self.accesses)
            if i == star:
                self._load(root, tuple(steps), True)
            else:
                k = i if i < star else i - len(elts)
                self._load(root, (*steps, ["elem", k]), True)
            self._visit_target(elt, self._with_control(self._reads_since(start)))
        return True

    def _literal_parts(
        self, target: ast.AST, value: ast.AST
    ) -> list[tuple[list, tuple[int, ...]]] | None:
        """Visit a dict/list/tuple literal bound to a name, one dependency set per part:
        ``[w, x] + [y, z]`` is one literal; elements after a ``*spread`` have no part of
        their own (their index is known only at run time)."""
        if not isinstance(target, ast.Name):
            return None
        items: list[tuple[object, ast.AST]] = []
        if isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values, strict=True):
                if not (isinstance(k, ast.Constant) and isinstance(k.value, (str, int))):
                    return None
                items.append((k.value, v))
        else:
            elts = _concatenated(value)
            if elts is None:
                return self._spread_parts(target, value)
            items = list(enumerate(elts))
        out: list[tuple[list, tuple[int, ...]]] = []
        spread = False
        for key, v in items:
            start = len(self.accesses)
            self.visit(v)
            spread = spread or isinstance(v, ast.Starred)
            if not spread:
                out.append((["key", key], self._reads_since(start)))
        return out

    def _spread_parts(
        self, target: ast.Name, value: ast.AST
    ) -> list[tuple[list, tuple[int, ...]]] | None:
        """``lst = y + [q]``: a list or tuple named first, then literals. The name's
        elements carry over one by one (a ``["spread", target]`` read: the runtime pairs
        ``y[k]`` with ``lst[k]`` when they are the same objects), and each literal element
        is its own part, counted from the end (its index depends on ``len(y)``)."""
        operands: list[ast.AST] = []
        node = value
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            operands.append(node.right)
            node = node.left
        operands.append(node)
        operands.reverse()
        head, rest = operands[0], operands[1:]
        if (
            not rest
            or not isinstance(head, ast.Name)
            or not self._is_global(head.id)
            or head.id in self.writes
            or self._deferred
            or not all(isinstance(r, (ast.List, ast.Tuple)) for r in rest)
        ):
            return None
        elts = [e for r in rest for e in r.elts]  # type: ignore[attr-defined]
        if any(isinstance(e, ast.Starred) for e in elts):
            return None
        self._load(head.id, (["spread", target.id],), True)
        out: list[tuple[list, tuple[int, ...]]] = []
        for k, e in enumerate(elts):
            start = len(self.accesses)
            self.visit(e)
            out.append((["elem", k - len(elts)], self._reads_since(start)))
        return out

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
            if self._is_global(node.target.id) and not self._deferred:
                self.inplace.setdefault(node.target.id)  # x += y changes a list or array in place
        else:
            # x[k] += v reads and writes the same part
            found = access_path(node.target)
            if found is not None:
                root, steps, exact, others = found
                for other in others:
                    self.visit(other)
                self._load(root, tuple(steps), exact)
            else:
                self.visit(node.target.value)  # type: ignore[attr-defined]
            self._visit_part_store(node.target, None, visit=False)

    def _visit_target(self, t: ast.AST, deps: tuple[int, ...] | None = None) -> None:
        if isinstance(t, ast.Name):
            self._store(t.id, deps)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for elt in t.elts:
                self._visit_target(elt, deps)
        elif isinstance(t, ast.Starred):
            self._visit_target(t.value, deps)
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            self._visit_part_store(t, deps)

    def _visit_part_store(
        self,
        t: ast.Attribute | ast.Subscript,
        deps: tuple[int, ...] | None,
        visit: bool = True,
        kind: str = "store",
    ) -> None:
        """x.a = v / x[i] = v: a write of that part of x (and reads of i)."""
        found = access_path(t)
        if found is None:
            if visit:
                self.visit(t.value)
                if isinstance(t, ast.Subscript):
                    self.visit(t.slice)
        else:
            root, steps, exact, others = found
            if visit:
                for other in others:
                    self.visit(other)
            if self._is_global(root) and not self._deferred:
                if root not in self.writes:
                    self.reads.setdefault(root)
                self._access(kind, root, tuple(steps), exact, deps)
            elif self._is_global(root):
                self._load(root)
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
                self._visit_part_store(t, (), kind="delete")
            else:
                self.visit(t)

    # -- blocks -----------------------------------------------------------

    def _visit_block(self, body: list[ast.stmt], conditional: bool, every: bool = False) -> None:
        """Visit a statement list, switching the guard at each guarded block it starts."""
        saved = self.guard
        heads = set(block_heads(body, conditional, every))
        for i, stmt in enumerate(body):
            if i in heads:
                self.guard = block_key(stmt)
                self.guards.append(self.guard)
            self.visit(stmt)
        self.guard = saved

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        it = node.iter
        body_guard = block_key(node.body[0]) if node.body else None
        if (
            isinstance(it, (ast.List, ast.Tuple))
            and it.elts
            and not any(isinstance(e, ast.Starred) for e in it.elts)
            and not self._deferred
        ):
            # over a literal: the target ends bound to the last element (any, with a break)
            spans: list[tuple[int, ...]] = []
            for elt in it.elts:
                start = len(self.accesses)
                self.visit(elt)
                spans.append(self._reads_since(start))
            chosen = it.elts if has_break(node.body) else [it.elts[-1]]
            saved, self.guard = self.guard, body_guard
            if len(chosen) == 1:
                last = len(it.elts) - 1
                pairs = _pair(node.target, [chosen[0]])
                if pairs is None:
                    self._visit_target(node.target, self._with_control(spans[last]))
                else:
                    for t, values in pairs:
                        # element-wise inside the last element: re-derive its spans
                        own = self._spans_of(chosen[0], spans[last], values)
                        self._visit_target(t, self._with_control(own))
            else:
                self._visit_target(
                    node.target, self._with_control(tuple(i for sp in spans for i in sp))
                )
            self.guard = saved
            iter_reads: tuple[int, ...] = tuple(i for sp in spans for i in sp)
        else:
            iter_reads = self._test(it)
            saved, self.guard = self.guard, body_guard
            found = access_path(it) if isinstance(it, (ast.Name, ast.Attribute)) else None
            if (
                found is not None
                and found[2]
                and not found[3]
                and isinstance(node.target, ast.Name)
                and not has_break(node.body)
                and not self._deferred
                and self._is_global(found[0])
                and found[0] not in self.writes
            ):
                # after the loop the target holds the last element
                start = len(self.accesses)
                self._load(found[0], (*found[1], ["elem", -1]), True)
                self._visit_target(node.target, self._with_control(self._reads_since(start)))
            else:
                self._visit_target(node.target)
            self.guard = saved
        self.control.append(iter_reads)
        target = node.target.id if isinstance(node.target, ast.Name) else None
        ranged = (
            target is not None
            and body_guard is not None
            and not self._deferred
            and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and not _changes_in(node.body, target)
        )
        if ranged:
            assert target is not None and body_guard is not None
            saved_ranges = dict(self.range_targets)
            self.range_targets[target] = body_guard
        self._visit_block(node.body, True)
        if ranged:
            self.range_targets = saved_ranges
        self._visit_block(node.orelse, True)
        self.control.pop()

    visit_AsyncFor = visit_For

    def _spans_of(
        self, whole: ast.AST, whole_reads: tuple[int, ...], parts: list[ast.AST]
    ) -> tuple[int, ...]:
        """Reads (among `whole_reads`, visited from `whole`) that come from `parts`."""
        wanted = {id(n) for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}
        names = [n for n in ast.walk(whole) if isinstance(n, ast.Name) and id(n) in wanted]
        roots = {n.id for n in names}
        return tuple(i for i in whole_reads if self.accesses[i].root in roots)

    def visit_While(self, node: ast.While) -> None:
        self.control.append(self._test(node.test))
        self._visit_block(node.body, True)
        self._visit_block(node.orelse, True)
        self.control.pop()

    def visit_If(self, node: ast.If) -> None:
        # a write in one branch does not hide a read in the other
        self.control.append(self._test(node.test))
        before = dict(self.writes)
        self._visit_block(node.body, True)
        after_body = self.writes
        self.writes = dict(before)
        self._visit_block(node.orelse, True)
        after_body.update(self.writes)
        self.writes = after_body
        self.control.pop()

    def visit_Try(self, node: ast.Try) -> None:
        if node.handlers and not self._deferred:
            self._visit_try_body(node.body)
        else:
            self._visit_block(node.body, False, every=bool(node.handlers))
        for h in node.handlers:
            saved = self.guard
            if h.body:
                self.guard = block_key(h.body[0])
                self.guards.append(self.guard)
            if h.type is not None:
                self.visit(h.type)
            if h.name:
                self._store(h.name)
            self.guard = saved
            self._visit_block(h.body, True)
        self._visit_block(node.orelse, True)
        self._visit_block(node.finalbody, False)

    visit_TryStar = visit_Try

    def _visit_try_body(self, body: list[ast.stmt]) -> None:
        """A guarded ``try`` body: each statement after the first is a block, and the writes
        of a simple statement count only if it completed (the next statement, or the marker
        after the last one, was reached): a statement that raised wrote nothing."""
        saved = self.guard
        for i, stmt in enumerate(body):
            if i:
                self.guard = block_key(stmt)
                self.guards.append(self.guard)
            simple = isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr))
            if simple and self.write_guard is None:
                if i + 1 < len(body):
                    self.write_guard = block_key(body[i + 1])
                else:
                    self.write_guard = after_key(stmt)
                    self.guards.append(self.write_guard)
                try:
                    self.visit(stmt)
                finally:
                    self.write_guard = None
            else:
                self.visit(stmt)
        self.guard = saved

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item)
        self._visit_block(node.body, False)

    visit_AsyncWith = visit_With

    def visit_Match(self, node: ast.Match) -> None:
        self.control.append(self._test(node.subject))
        for case in node.cases:
            saved = self.guard
            if case.body:
                self.guard = block_key(case.body[0])
            self.visit(case.pattern)
            if case.guard is not None:
                self.visit(case.guard)
            self.guard = saved
            self._visit_block(case.body, True)
        self.control.pop()

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
        if self._frame_chain(node):
            return
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id == "len"
            and len(node.args) == 1
            and not node.keywords
            and not isinstance(node.args[0], ast.Starred)
            and self._is_global("len")
            and rows_model(node.args[0]) is not None
        ):
            self.visit(func)
            self._call_facts(node)
            if not self._frame_chain(node.args[0], rows_of=True):  # len(df): its rows
                self.visit(node.args[0])
            return
        self._call_args(node)
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _WRITE_ONLY_METHODS
            and isinstance(func.value, (ast.Name, ast.Attribute, ast.Subscript))
        ):
            # lst.append(x) changes lst without reading what it holds
            found = access_path(func.value)
            if found is not None and self._is_global(found[0]) and not self._deferred:
                root, _steps, _exact, others = found
                if root not in self.writes:
                    self.reads.setdefault(root)
                for other in others:
                    self.visit(other)
                self._mark(self.receivers, func.value)
                if isinstance(func.value, ast.Name):
                    self.method_calls.setdefault((root, func.attr))
                self._mark(self.inplace, func.value)
                for a in node.args:
                    self.visit(a)
                for k in node.keywords:
                    self.visit(k.value)
                return
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "get"
            and node.args
            and isinstance(func.value, (ast.Name, ast.Attribute, ast.Subscript))
            and not self._deferred
        ):
            # m.get('k'[, default]) reads the part m['k'], like m['k'] would
            found = access_path(func.value)
            key = _constant_key(node.args[0])
            if found is not None and found[2] and key is not None and self._is_global(found[0]):
                root, steps, _exact, others = found
                for other in others:
                    self.visit(other)
                self._load(root, (*steps, ["key", key]), True)
                for a in node.args[1:]:
                    self.visit(a)
                for k in node.keywords:
                    self.visit(k.value)
                return
        self._call_tail(node)
        self.generic_visit(node)

    def _call_facts(self, node: ast.Call) -> None:
        """What a call tells apart from its reads: callees, receivers, in-place marks."""
        self._call_args(node)
        self._call_tail(node)

    def _call_args(self, node: ast.Call) -> None:
        func = node.func
        if not self._deferred:
            callee = _dotted(func)
            args = [(callee, a) for a in node.args]
            args += [("?" if k.arg == "out" else callee, k.value) for k in node.keywords]
            for who, arg in args:
                inner = arg.value if isinstance(arg, ast.Starred) else arg
                root = _root_name(inner)
                if root is not None and self._is_global(root):
                    self.call_args.setdefault((who or "?", root))

    def _call_tail(self, node: ast.Call) -> None:
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
            record.entry_guard = self.guard
            self.records.append(record)
        saved_guard = self.guard
        if record is not None:
            self.guard = None  # the body's own blocks are keyed from its start
        try:
            if isinstance(body, list):
                self._visit_block(body, False)
            else:
                self.visit(body)
        finally:
            self.guard = saved_guard
            self.scopes.pop()
            if record is not None:
                self.records.pop()
        if record is not None and len(self.records) == 0:
            self.functions.append(record.freeze())

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        top = not self._deferred
        self._visit_function_like(node, node.name, node.body)
        if top and self.functions and self.functions[-1].name == node.name:
            flows = return_flow(node)
            if flows is not None:
                info = self.functions[-1]
                self.functions[-1] = info.model_copy(
                    update={"return_reads": flows[0], "return_items": flows[1]}
                )
        self._store(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        # inline lambda (an argument, a key=...): assume it runs within the statement
        self._visit_function_like(node, None, node.body)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(d)
        record = _FunctionRecord(node.name, track_guards=False)
        record.entry_guard = self.guard
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
            info = record.freeze()
            attrs = _init_attrs(node)
            self.functions.append(info.model_copy(update={"init_attrs": attrs}) if attrs else info)
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


def _dotted(node: ast.AST) -> str | None:
    """``np.random.shuffle`` for a dotted name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _pair(target: ast.AST, values: list[ast.AST]) -> list[tuple[ast.AST, list[ast.AST]]] | None:
    """Element-wise pairs of an unpacking target with a literal of matching shape."""
    if len(values) != 1 or not isinstance(target, (ast.Tuple, ast.List)):
        return None
    value = values[0]
    if not isinstance(value, (ast.Tuple, ast.List)):
        return None
    if any(isinstance(e, ast.Starred) for e in value.elts):
        return None
    t, v = target.elts, value.elts
    stars = [i for i, e in enumerate(t) if isinstance(e, ast.Starred)]
    out: list[tuple[ast.AST, list[ast.AST]]] = []
    if not stars:
        if len(t) != len(v):
            return None
        groups = [[x] for x in v]
    else:
        k = stars[0]
        after = len(t) - k - 1
        if len(stars) > 1 or len(v) < len(t) - 1:
            return None
        groups = [[x] for x in v[:k]] + [list(v[k : len(v) - after])]
        groups += [[x] for x in v[len(v) - after :]]
    for te, ve in zip(t, groups, strict=True):
        inner = _pair(te, ve) if not isinstance(te, ast.Starred) else None
        if inner is None:
            out.append((te, ve))
        else:
            out.extend(inner)
    return out


def _init_attrs(cls: ast.ClassDef) -> tuple[tuple[str, tuple[str, ...], bool], ...]:
    """What each attribute ``__init__`` sets reads: (attribute, globals, reads a parameter).

    Only for an ``__init__`` made of ``self.a = <expr>`` statements (an expression without
    calls, lambdas or comprehensions, reading no local but parameters) and statements that
    never mention ``self`` or ``super``; anything else gives nothing (the instance then
    depends, as a whole, on everything its creation read)."""
    init = next(
        (
            st
            for st in cls.body
            if isinstance(st, ast.FunctionDef) and st.name == "__init__" and st.args.args
        ),
        None,
    )
    if init is None or init.decorator_list:
        return ()
    params = set(_args_names(init.args))
    me = init.args.args[0].arg
    bound = _body_binder(init.body).bound
    out: dict[str, tuple[tuple[str, ...], bool] | None] = {}
    for st in init.body:
        names = [n for n in ast.walk(st) if isinstance(n, ast.Name)]
        if not any(n.id in (me, "super") for n in names):
            continue  # logging, a local computed without self
        if not (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Attribute)
            and isinstance(st.targets[0].value, ast.Name)
            and st.targets[0].value.id == me
        ):
            return ()
        attr = st.targets[0].attr
        if any(isinstance(n, _OPAQUE_VALUES) for n in ast.walk(st.value)):
            out[attr] = None
            continue
        loads = {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
        if me in loads or loads & (bound - params):
            out[attr] = None  # reads the instance or a local: not known here
            continue
        out[attr] = (tuple(sorted(loads - params)), bool(loads & params))
    return tuple((a, v[0], v[1]) for a, v in out.items() if v is not None)


_OPAQUE_VALUES = (
    ast.Call, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
    ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom,
)  # fmt: skip


def _changes_in(body: list[ast.stmt], name: str) -> bool:
    """Whether `body` rebinds `name` or defines a scope (where `name` may mean another)."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return True
            if (
                isinstance(node, ast.Name)
                and node.id == name
                and not isinstance(node.ctx, ast.Load)
            ):
                return True
    return False


def _concatenated(node: ast.AST) -> list[ast.expr] | None:
    """The elements of a list/tuple literal, or of literals joined by ``+``."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _concatenated(node.left), _concatenated(node.right)
        if left is not None and right is not None and type(node.left) is type(node.right):
            return left + right
    return None


def _constant_key(node: ast.AST) -> str | int | None:
    """A string or integer literal used as a key."""
    if isinstance(node, ast.Constant) and type(node.value) in (str, int):
        return node.value
    return None
