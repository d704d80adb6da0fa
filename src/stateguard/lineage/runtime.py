"""The runtime pass: runs *inside* the kernel around every user cell.

`install(shell)` registers IPython ``pre_run_cell``/``post_run_cell`` hooks.
Before a cell it analyses the source statically (the same `analyze_cell` the
host uses), snapshots the identity of every user variable, and fingerprints
the names the cell could touch: names it reads, globals of functions it uses
(transitively, from their bytecode), and every other name aliased to them by
object identity or containment. After the cell it diffs identities and
fingerprints and publishes a `CellReport` as private display data
(`REPORT_MIME`), which the host's kernel session separates from user output.

Silent executions (the host's own bookkeeping, probes) do not fire these hooks.
Nothing here ever changes the user's namespace.
"""

from __future__ import annotations

import ast
import dis
import re
import sys
import time
import types
from typing import Any

from stateguard.lineage.coverage import (
    COVER_NAME,
    FOR_NAME,
    SNAP_NAME,
    WATCH,
    BlockMarkers,
    restore,
    snapshot,
)
from stateguard.lineage.fingerprint import (
    Fingerprint,
    changed_columns,
    changed_parts,
    column_layout,
    compare,
    fingerprint,
    is_immutable_scalar,
    reframed_columns,
    restated_parts,
)
from stateguard.lineage.objects import (
    _MISSING,
    _SCALAR_TYPES,
    _codes_of,
    _equal_scalars,
    _is_user_callable,
    _member_ids,
    summarize,
)
from stateguard.lineage.parts import (
    MUTATING_METHODS,
    frame_columns,
    may_change_arguments,
    normalize,
    part_text,
    reach,
    tracked_pure_receiver,
)
from stateguard.lineage.report import REPORT_MIME, CellReport
from stateguard.lineage.static import CellAnalysis, StatementInfo, analyze_cell, analyze_tree


def _static_evidence(analysis: CellAnalysis) -> set[str]:
    """Names the cell syntactically mutates (stores into, inplace calls, list.append…)."""
    return set(analysis.mutates) | {n for st in analysis.statements for n in st.inplace_calls}


class _Pending:
    """What the pre-cell hook hands to the post-cell hook."""

    __slots__ = (
        "analysis", "before", "candidates", "gap", "identity", "opaque", "slots", "source"
    )  # fmt: skip

    def __init__(
        self,
        analysis: CellAnalysis,
        source: str,
        before: dict[str, Any],
        candidates: set[str],
        opaque: set[str],
        slots: dict[int, int],
    ) -> None:
        self.analysis = analysis
        self.source = source
        self.before = before
        self.candidates = candidates
        self.opaque = opaque
        self.slots = slots
        # frames written at one label known only at run time: their column addresses
        self.identity: dict[str, tuple[Any, ...]] = {}
        self.gap: tuple[dict[str, str], dict[str, str], tuple[str, ...]] | None = None


#: IPython's own names. ``_`` and ``_N`` (the output history) are values like any other:
#: ``y = _ + 1`` reads what ``_`` held.
_OUTPUT_NAME = re.compile(r"^_\d*$")
_IPY_NAME = re.compile(r"^(__+|_i+|_i\d+|_ih|_oh|_dh|In|Out|get_ipython|exit|quit)$")


class LineageAgent:
    """Per-kernel runtime pass; one instance per kernel process."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        # name -> (id, fingerprint) valid as of the end of the previous cell
        self._cache: dict[str, tuple[int, Fingerprint | None]] = {}
        # keyed by the code object itself: an id could be reused by a later, different code
        self._code_globals: dict[types.CodeType, frozenset[str]] = {}
        # name -> (id, member ids); valid while the name is not a candidate of a cell
        self._members: dict[str, tuple[int, frozenset[int]]] = {}
        self._rev: dict[int, set[str]] = {}  # object or member id -> names holding it
        self._pending: _Pending | None = None
        self._source = ""
        self._unobserved: str | None = None
        self._visible: dict[str, bool] = {}  # name -> not one of IPython's own
        self._compiler: tuple[Any, Any] | None = None
        self.token = ""
        self.seq = 0
        # the namespace as the last report left it, and whether cells ran unreported since
        self._last_ns: dict[str, Any] = {}
        self._gap = False
        self.enabled = True
        self._pre_seconds = 0.0
        self.markers = BlockMarkers()
        # code id -> (code, [(global, slot or None)]): guarded reads of cell-defined functions
        self._fn_reads: dict[int, tuple[types.CodeType, tuple[tuple[str, int | None], ...]]] = {}
        self._fn_slots: set[int] = set()
        # __init__ code id -> (code, (attribute, globals, reads a parameter) per attribute)
        self._inits: dict[int, tuple[types.CodeType, tuple[Any, ...]]] = {}
        # function code id -> (code, globals that flow into its return value)
        self._returns: dict[int, tuple[types.CodeType, tuple[str, ...]]] = {}
        self._ranged: set[str] = set()  # names read at loop positions in this cell
        self._returns_items: dict[int, tuple[types.CodeType, tuple[tuple[str, ...], ...]]] = {}

    # -- hooks ---------------------------------------------------------------

    def install(self) -> None:
        """Register the hooks on the IPython shell (idempotent: hooks still registered keep
        their place among other callbacks)."""
        callbacks = self.shell.events.callbacks
        if self.pre_run_cell not in callbacks["pre_run_cell"]:
            self.shell.events.register("pre_run_cell", self.pre_run_cell)
        if self.post_run_cell not in callbacks["post_run_cell"]:
            self.shell.events.register("post_run_cell", self.post_run_cell)
        # the cell's tree is taken where IPython parses it: registering an AST transformer
        # would make IPython re-walk every tree (fix_missing_locations) for every cell
        compiler = self.shell.compile
        if self._compiler is not None and vars(compiler).get("ast_parse") is self._compiler[1]:
            return  # already ours
        original = type(compiler).ast_parse.__get__(compiler)

        def ast_parse(*args: Any, **kwargs: Any) -> Any:
            return self.markers.visit(original(*args, **kwargs))

        compiler.ast_parse = ast_parse
        self._compiler = (compiler, ast_parse)
        self._publish_helpers()

    def _publish_helpers(self) -> None:
        ns = self.shell.user_ns
        if ns.get(COVER_NAME) is not self.markers.cov:
            ns[COVER_NAME] = self.markers.cov
            ns[FOR_NAME] = self.markers.for_wrapper
            ns[SNAP_NAME] = snapshot
            self.shell.user_ns_hidden[SNAP_NAME] = snapshot
            self.shell.user_ns_hidden[COVER_NAME] = self.markers.cov
            self.shell.user_ns_hidden[FOR_NAME] = self.markers.for_wrapper

    def uninstall(self) -> None:
        """Remove the hooks if registered."""
        for event, cb in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            if cb in self.shell.events.callbacks[event]:
                self.shell.events.unregister(event, cb)
        installed = getattr(self, "_compiler", None)
        if installed is not None:
            compiler, ours = installed
            if vars(compiler).get("ast_parse") is ours:
                del compiler.ast_parse  # back to the class's own method
            self._compiler = None

    def reset(self) -> None:
        """Forget caches (after the host reset the namespace)."""
        self._cache.clear()
        self._code_globals.clear()
        self._members.clear()
        self._rev.clear()
        self._pending = None
        self._fn_reads.clear()
        self._fn_slots.clear()
        self._inits.clear()
        self._returns.clear()
        self._returns_items.clear()

    def user_names(self) -> dict[str, Any]:
        """User-visible globals, without IPython's own bookkeeping names."""
        hidden = self.shell.user_ns_hidden
        visible = self._visible
        out: dict[str, Any] = {}
        for k, v in self.shell.user_ns.items():
            ok = visible.get(k)
            if ok is None:
                ok = visible[k] = not _IPY_NAME.match(k) and not (
                    k.startswith("__") and k.endswith("__")  # __warningregistry__ etc.
                )
            if ok and (k not in hidden or _OUTPUT_NAME.match(k)):
                out[k] = v
        return out

    def pre_run_cell(self, info: Any) -> None:
        """Arm the cell: its tree is analysed when IPython hands it to the transformers."""
        if not self.enabled:
            return
        started = time.perf_counter()
        source = getattr(info, "transformed_cell", None)
        if source is None:  # older IPython: transform it ourselves
            source = self.shell.transform_cell(info.raw_cell or "")
        self._source = source
        self._pending = None
        self.markers.on_tree = self._prepare
        self.markers.armed = True
        self._pre_seconds = time.perf_counter() - started

    def _prepare(self, tree: ast.Module) -> None:
        """Snapshot identities and fingerprint candidates before the cell runs."""
        started = time.perf_counter()
        source = self._source
        analysis = analyze_tree(tree)
        self._publish_helpers()
        slots = self.markers.prepare(k for st in analysis.statements for k in st.guards)
        self.markers.reset(self._fn_slots)
        calling = [st.index for st in analysis.statements if st.calls]
        if self._fn_slots and len(calling) > 1:
            # which of the functions' blocks each statement reached (the last write wins)
            self.markers.watch(self._fn_slots, calling)
        before = self.user_names()
        direct: set[str] = set()
        for st in analysis.statements:
            direct.update(st.reads, st.mutates, st.method_receivers, st.calls)
        reached = self._function_globals(analysis, before)
        candidates = self._candidates(direct, reached, before)
        opaque = self._opaque(analysis, before, candidates, direct, reached)
        layouts: dict[str, tuple[Any, ...]] = {}
        for name in self._label_stores(analysis, before) - opaque:
            layout = column_layout(before[name])
            if layout is None:
                opaque.add(name)  # no cheap layout: fingerprints decide
            else:
                layouts[name] = layout
        evidence = _static_evidence(analysis)
        for name in opaque:
            obj = before[name]
            cached = self._cache.get(name)
            stale_mode = (
                cached is not None
                and cached[1] is not None
                and cached[1].full is None
                and not cached[1].exact
                and name not in evidence
            )
            if cached is None or cached[0] != id(obj) or stale_mode:
                # no static evidence this time: the comparison needs the thorough form
                self._cache[name] = (id(obj), fingerprint(obj))
        # strong references keep ids from being reused while the cell runs
        self._pending = _Pending(analysis, source, before, candidates, opaque, slots)
        self._pending.identity = layouts
        if self._gap:
            self._pending.gap = self._gap_changes(before)
            self._gap = False
        self._pre_seconds += time.perf_counter() - started

    def rearm(self, token: str, seq: int) -> None:
        """Hooks back on after a cell sent no report; the next report also carries what
        changed since the last one."""
        self.token, self.seq = token, seq
        self.enabled = True
        self._pending = None
        self.install()
        self._gap = True

    def _gap_changes(
        self, ns: dict[str, Any]
    ) -> tuple[dict[str, str], dict[str, str], tuple[str, ...]]:
        last = self._last_ns
        rebound = {n: summarize(o) for n, o in ns.items() if last.get(n, _MISSING) is not o}
        deleted = tuple(n for n in last if n not in ns)
        mutated: dict[str, str] = {}
        for name, obj in ns.items():
            if name in rebound:
                continue
            cached = self._cache.get(name)
            if cached is None or cached[0] != id(obj):
                continue  # never fingerprinted: no evidence either way (the cell is unverified)
            new_fp = fingerprint(obj)
            if cached[1] is None or new_fp is None or compare(cached[1], new_fp)[0]:
                mutated[name] = summarize(obj)
            self._cache[name] = (id(obj), new_fp)
        for n in (*rebound, *mutated, *deleted):
            self._unindex(n)
        return rebound, mutated, deleted

    def post_run_cell(self, result: Any) -> None:
        """Diff the namespace and publish the cell's report."""
        if not self.enabled or (self._pending is None and not self.markers.armed):
            return
        started = time.perf_counter()
        if self._pending is None:
            self.markers.armed = False
            analysis = analyze_cell(self._source)
            if analysis.syntax_error is None:
                # it parses, yet its tree never reached us: what ran was not observed
                self._unobserved = "the cell's code never reached the lineage pass"
                analysis = CellAnalysis(syntax_error="lineage failed: the cell was not observed")
            self._pending = _Pending(analysis, self._source, {}, set(), set(), {})
        pending = self._pending
        self._pending = None
        source = pending.source
        try:
            report = self._build_report(pending, result)
        except Exception as exc:  # never break the user's cell because of bookkeeping
            report = CellReport(
                source=source,
                analysis=CellAnalysis(syntax_error=f"lineage failed: {type(exc).__name__}: {exc}"),
            )
        from IPython.display import publish_display_data

        self.seq += 1
        unobserved, self._unobserved = self._unobserved, None
        update: dict[str, Any] = {
            "unobserved": unobserved,
            "hook_seconds": self._pre_seconds + time.perf_counter() - started,
            "token": self.token,
            "seq": self.seq,
        }
        if pending.gap is not None:
            update["gap_rebound"], update["gap_mutated"], update["gap_deleted"] = pending.gap
        report = report.model_copy(update=update)
        # one JSON string: the kernel's and the client's message layers walk nested
        # structures element by element in Python, a string they pass through whole
        plain = report.analysis.plain
        # a plain statement's accesses say nothing its name-level facts do not: left out
        leave_out = (
            {"analysis": {"statements": {i: {"accesses"} for i in plain}}} if plain else None
        )
        publish_display_data(
            {REPORT_MIME: report.model_dump_json(exclude_defaults=True, exclude=leave_out)}
        )

    # -- the diff -------------------------------------------------------------

    def _build_report(self, pending: _Pending, result: Any) -> CellReport:
        analysis, source, before = pending.analysis, pending.source, pending.before
        candidates, opaque = pending.candidates, pending.opaque
        after = self.user_names()
        if analysis.syntax_error is not None:
            return CellReport(source=source, analysis=analysis)
        written = set(analysis.writes)
        rebound: dict[str, str] = {}
        unchanged: list[str] = []
        for name, obj in after.items():
            old = before.get(name, _MISSING)
            if old is obj:
                if name in written:
                    unchanged.append(name)
                continue
            if (
                old is not _MISSING
                and type(old) is type(obj)
                and is_immutable_scalar(obj)
                and is_immutable_scalar(old)
                and _equal_scalars(old, obj)
            ):
                unchanged.append(name)
                self._cache[name] = (id(obj), self._cache.get(name, (0, None))[1])
                continue
            rebound[name] = summarize(obj)
        deleted = tuple(n for n in before if n not in after)
        for n in deleted:
            self._cache.pop(n, None)

        ran = self.markers.ran(pending.slots)
        if self.markers.failed:
            ran = {k for st in analysis.statements for k in st.guards}
        executed = _executed(analysis, self._failed_statement(result, analysis))
        paths, carried = self._paths(analysis, before, after, pending.slots)
        stores = self._stores(analysis, executed, ran, paths)
        evidence = _static_evidence(analysis)
        alias_groups = self._alias_groups(candidates, after)
        mutated: dict[str, str] = {}
        mutated_parts: dict[str, tuple[tuple[str, ...], ...]] = {}
        for name in sorted(candidates):  # a set: sorted, so every run reports alike
            if name in rebound or name not in after:
                continue
            obj = after[name]
            if name in pending.identity:
                # one column replaced at a label the cell computed: the column whose
                # buffer changed (no hashing)
                self._cache.pop(name, None)
                moved = changed_columns(pending.identity[name], column_layout(obj))
                if moved is None:
                    mutated[name] = summarize(obj)
                elif moved:
                    mutated[name] = summarize(obj)
                    mutated_parts[name] = tuple((p,) for p in moved)
                continue
            if name not in opaque:
                # changed only through constant stores: those parts, no hashing
                own = stores.get(name)
                if own is None and stores and name in alias_groups:
                    same = [a for a in alias_groups[name] if after.get(a) is obj]
                    own = next((stores[a] for a in same if a in stores), None)
                if own is not None:
                    self._cache.pop(name, None)
                    mutated[name] = summarize(obj)
                    mutated_parts[name] = tuple(own)
                continue
            old_fp = self._cache.get(name, (None, None))[1]
            group = {name, *alias_groups.get(name, ())}
            static_says = bool(group & evidence)
            # with static evidence an approximate "same" still counts as a change, so the
            # full pass over a large frame would not change the verdict
            new_fp = fingerprint(obj, thorough=not static_says)
            self._cache[name] = (id(obj), new_fp)
            if old_fp is None or new_fp is None:
                changed = static_says
            else:
                differs, certain = compare(old_fp, new_fp)
                changed = differs or (static_says and not certain)
            if changed:
                mutated[name] = summarize(obj)
                # parts are trusted only when both fingerprints cover every value
                parts = (
                    changed_parts(old_fp, new_fp)
                    if old_fp is not None and new_fp is not None and old_fp.exact and new_fp.exact
                    else None
                )
                if parts is not None:
                    own = stores.get(name, [])
                    mutated_parts[name] = tuple(dict.fromkeys([*own, *((p,) for p in parts)]))

        for key in [k for k in paths if self._ranged]:
            st_i, _, a_i = key.partition(":")
            a = analysis.statements[int(st_i)].accesses[int(a_i)]
            positional = a.path and (
                a.path[0][0] in ("range", "var") or any(step[0] == "elem" for step in a.path)
            )
            if positional and a.root in self._ranged and (a.root in mutated or a.root in rebound):
                del paths[key]  # changed in the cell: positions may have moved, read it whole
        self._ranged.clear()
        reseeded: list[str] = []
        for name, part in _reseeded(analysis, executed, ran, before):
            # a generator reseeded: values drawn from its old state are superseded
            if name in rebound or name not in after:
                continue
            whole = name in mutated and name not in mutated_parts
            mutated[name] = summarize(after[name])
            if part is None:
                mutated_parts.pop(name, None)  # the module is the generator: all of it
            elif not whole:
                mutated_parts[name] = tuple(dict.fromkeys((*mutated_parts.get(name, ()), part)))
                reseeded.append(name)

        reframed: list[str] = []
        cell_reads = set(analysis.reads) if rebound else set()
        for name in [n for n in rebound if n in cell_reads and n in before]:
            # df = df.assign(..), df = df.merge(..): the same rows, some columns changed
            parts = reframed_columns(before[name], after[name])
            if parts is None:
                continue
            del rebound[name]
            self._cache.pop(name, None)
            if not parts:
                unchanged.append(name)
                continue
            reframed.append(name)
            mutated[name] = summarize(after[name])
            mutated_parts[name] = tuple((p,) for p in parts)
        restated: dict[str, tuple[str, ...]] = {}
        for name in [n for n in rebound if n in before and n not in cell_reads]:
            # df = pd.read_csv(..) again, g = df.groupby(..)[..].sum() again: a new object
            # that holds what the old one held, or the same rows with some columns changed
            # (an alias keeps the rebinding whole); the graph decides what it means
            old, obj = before[name], after[name]
            if any(v is old or v is obj for n, v in after.items() if n != name):
                continue
            parts = restated_parts(old, obj)
            if parts is not None:
                restated[name] = parts

        changed_names = set(rebound) | set(mutated)
        for n in candidates:
            if type(after.get(n)) not in _SCALAR_TYPES:
                self._unindex(n)  # its members may have changed (a scalar has none)
        for n in (*rebound, *deleted):
            self._unindex(n)
        self._register_functions(analysis, after, pending.slots)
        instances = self._instances(analysis, executed, ran, after) if self._inits else {}
        statement_globals: dict[int, dict[str, tuple[str, ...]]] = {}
        if self.markers.snaps and not self.markers.failed:
            last = frozenset(s for s in WATCH if self.markers.cov[s])
            for st in analysis.statements[:executed]:
                hit = self.markers.snaps.get(st.index)
                if hit is None and st.index == executed - 1 and st.calls:
                    hit = last
                if hit is not None:
                    one = CellAnalysis.model_construct(statements=(st,), syntax_error=None)
                    statement_globals[st.index] = self._function_globals(
                        one, after, ran_slots=True, hit=hit
                    )
            restore()
        function_globals = self._function_globals(analysis, after, ran_slots=True)
        return_globals: dict[str, tuple[str, ...]] = {}
        for name, globs in function_globals.items():
            fn = after.get(name)
            if isinstance(fn, types.FunctionType) and self._returns:
                flow = self._return_flow(fn, after, {id(fn)})
                if flow is not None:
                    return_globals[name] = tuple(g for g in globs if g in flow)
                items = self._returns_items.get(id(fn.__code__))
                if flow is not None and items is not None and items[0] is fn.__code__:
                    for k, item in enumerate(items[1]):
                        got = self._expand_flow(item, after, {id(fn)})
                        return_globals[f"{name}[{k}]"] = tuple(g for g in globs if g in got)
        self._last_ns = after
        return CellReport(
            source=source,
            analysis=analysis,
            failed_statement=self._failed_statement(result, analysis),
            rebound=rebound,
            mutated=mutated,
            deleted=deleted,
            unchanged=tuple(unchanged),
            function_globals=function_globals,
            statement_globals=statement_globals,
            return_globals=return_globals,
            aliases={
                n: tuple(sorted(alias_groups[n])) for n in changed_names if alias_groups.get(n)
            },
            ran_blocks=None if self.markers.failed else tuple(sorted(ran)),
            paths=paths,
            mutated_parts=mutated_parts,
            carried=carried,
            reframed=tuple(reframed),
            restated=restated,
            reseeded=tuple(dict.fromkeys(reseeded)),
            instances=instances,
            user_objects=tuple(
                n for n in rebound if getattr(type(after[n]), "__module__", None) == "__main__"
            ),
        )

    def _opaque(
        self,
        analysis: CellAnalysis,
        ns: dict[str, Any],
        candidates: set[str],
        direct: set[str],
        reached: dict[str, tuple[str, ...]],
    ) -> set[str]:
        """Candidates whose changes only fingerprints can tell: everything but names the cell
        only reads, or writes through constant paths, with nothing else that may change them.
        `direct` holds the names the cell's statements name; `reached`, the globals of the
        functions it uses."""
        if any(st.star_import for st in analysis.statements):
            return set(candidates)
        opaque: set[str] = set()
        bound: set[str] = set()
        changed: set[str] = set()
        for st in analysis.statements:
            bound.update(st.writes)
            opaque.update(st.inplace_calls)
            changed.update(st.inplace_calls, st.mutates)
            for a in st.accesses:
                if a.kind not in ("store", "delete") or a.literal:
                    continue
                if list(a.path) == [["label"]] and a.kind == "store":
                    continue  # df[f'c{i}'] = ..: read off the column layout (see below)
                if not a.path or not a.exact:
                    opaque.add(a.root)
                elif a.root in ns and not _reaches_all(ns[a.root], a.path):
                    opaque.add(a.root)  # into something inside a part: maybe not that part
                elif a.kind == "delete" and not _keyed(_held_at(ns.get(a.root), a.path[:-1])):
                    opaque.add(a.root)  # del lst[0] moves every later element
            for recv, meth in st.method_calls:
                if meth in MUTATING_METHODS or not tracked_pure_receiver(ns.get(recv)):
                    opaque.add(recv)
            called = {r for r, _ in st.method_calls}
            for recv in st.method_receivers:
                if recv not in called and not tracked_pure_receiver(ns.get(recv)):
                    opaque.add(recv)
            for callee, root in st.call_args:
                if may_change_arguments(callee, ns):
                    opaque.add(root)
        for globs in reached.values():
            opaque.update(globs)
        opaque.update(candidates - direct)  # reached only through an alias
        if bound & changed:
            # a name bound here and changed here may be a view of anything the cell read
            opaque.update(candidates)
        return opaque & candidates

    @staticmethod
    def _label_stores(analysis: CellAnalysis, ns: dict[str, Any]) -> set[str]:
        """Frames the cell writes only as ``df[<one label>] = ...`` (an f-string key)."""
        pd = sys.modules.get("pandas")
        if pd is None:
            return set()
        out: set[str] = set()
        for st in analysis.statements:
            for a in st.accesses:
                if (
                    a.kind == "store"
                    and not a.exact
                    and list(a.path) == [["label"]]
                    and isinstance(ns.get(a.root), pd.DataFrame)
                ):
                    out.add(a.root)
        return out

    def _paths(
        self,
        analysis: CellAnalysis,
        before: dict[str, Any],
        after: dict[str, Any],
        slots: dict[int, int] | None = None,
    ) -> tuple[dict[str, tuple[tuple[str, ...], ...]], dict[str, tuple[tuple[str, str], ...]]]:
        """Normalize every access path of the cell against the live values; and, for the
        frame-valued chains bound to a name, the columns they carried (see `_carry`)."""
        out: dict[str, tuple[tuple[str, ...], ...]] = {}
        carried: dict[str, tuple[tuple[str, str], ...]] = {}
        rebinds: set[str] | None = None
        for st in analysis.statements:
            for i, a in enumerate(st.accesses):
                if not a.path:
                    continue
                if a.kind == "read" and a.path[0][0] == "var":
                    # lst[i]: the part at i's value, when the cell does not rebind i
                    if rebinds is None:
                        rebinds = set(analysis.writes)
                    name = a.path[0][1]
                    key = before.get(name, after.get(name, _MISSING))
                    obj = before[a.root] if a.root in before else after.get(a.root)
                    if name in rebinds or type(key) not in (int, str) or obj is None:
                        continue
                    try:
                        found = normalize(obj, (["key", key],))
                    except Exception:  # a user __getitem__ that raises: the whole value
                        continue
                    if found and found != [[]]:
                        out[f"{st.index}:{i}"] = tuple(tuple(p) for p in found)
                        self._ranged.add(a.root)
                    continue
                if a.kind == "read" and a.path[0][0] == "spread":
                    pairs = _spread(a.root, a.path[0][1], before, after)
                    if pairs:
                        out[f"{st.index}:{i}"] = tuple((s,) for s, _ in pairs)
                        carried[f"{st.index}:{i}"] = pairs
                    continue
                if a.kind == "read" and a.path[0][0] == "carry":
                    pairs = _carry(a.root, a.path, before, after)
                    if pairs:
                        out[f"{st.index}:{i}"] = tuple(dict.fromkeys((s,) for s, _ in pairs))
                        carried[f"{st.index}:{i}"] = pairs
                    continue
                if a.kind == "read":
                    obj = before[a.root] if a.root in before else after.get(a.root)
                else:
                    obj = after[a.root] if a.root in after else before.get(a.root)
                if obj is None:
                    continue
                if a.path[0][0] == "range":
                    found_range = _range_parts(obj, self.markers.ranges.get(
                        (slots or {}).get(a.path[0][1], -1)))  # fmt: skip
                    if found_range is not None and after.get(a.root) is obj:
                        out[f"{st.index}:{i}"] = found_range
                        self._ranged.add(a.root)
                    continue
                try:
                    found = normalize(obj, a.path)
                except Exception:  # a user __getattr__/__eq__ that raises: the whole value
                    continue
                if found != [[]]:
                    out[f"{st.index}:{i}"] = tuple(tuple(p) for p in found)
                    if a.kind == "read" and any(step[0] == "elem" for step in a.path):
                        self._ranged.add(a.root)
        return out, carried

    @staticmethod
    def _stores(
        analysis: CellAnalysis,
        executed: int,
        ran: set[int],
        paths: dict[str, tuple[tuple[str, ...], ...]],
    ) -> dict[str, list[tuple[str, ...]]]:
        """Root -> part paths written through constant paths by code that ran."""
        out: dict[str, list[tuple[str, ...]]] = {}
        for st in analysis.statements[:executed]:
            for i, a in enumerate(st.accesses):
                if a.kind not in ("store", "delete") or not a.path or a.literal:
                    continue
                if a.guard is not None and a.guard not in ran:
                    continue
                for p in paths.get(f"{st.index}:{i}", ()):
                    if p:
                        out.setdefault(a.root, []).append(p)
        return out

    def _register_functions(
        self, analysis: CellAnalysis, ns: dict[str, Any], slots: dict[int, int]
    ) -> None:
        """Remember, per code object, which global reads of a function sit in which block;
        and, per class ``__init__``, what each attribute it sets read."""
        for st in analysis.statements:
            for info in st.functions:
                fn = ns.get(info.name)
                if info.return_reads is not None and isinstance(fn, types.FunctionType):
                    self._returns[id(fn.__code__)] = (fn.__code__, info.return_reads)
                    if info.return_items is not None:
                        self._returns_items[id(fn.__code__)] = (fn.__code__, info.return_items)
                if info.init_attrs and isinstance(fn, type):
                    init = vars(fn).get("__init__")
                    code = getattr(init, "__code__", None)
                    if isinstance(code, types.CodeType):
                        self._inits[id(code)] = (code, info.init_attrs)
                if not isinstance(fn, types.FunctionType) or not info.guarded_reads:
                    continue
                reads = tuple(
                    (g, None if guard is None else slots.get(guard))
                    for g, guard in info.guarded_reads
                )
                if any(
                    guard is not None and slot is None
                    for (_, guard), (_, slot) in zip(info.guarded_reads, reads, strict=True)
                ):
                    continue  # a block without a marker: keep every read
                self._fn_reads[id(fn.__code__)] = (fn.__code__, reads)
                self._fn_slots.update(slot for _, slot in reads if slot is not None)

    def _instances(
        self, analysis: CellAnalysis, executed: int, ran: set[int], ns: dict[str, Any]
    ) -> dict[str, tuple[str, tuple[tuple[str, tuple[str, ...], bool], ...]]]:
        """``foo = Foo(..)`` binds of a class whose ``__init__`` is known: "statement:access"
        of the bind -> (the class's name, what each attribute it set read). Only when no later
        statement of the cell touches the name (its attributes are then as ``__init__`` left
        them)."""
        out: dict[str, tuple[str, tuple[tuple[str, tuple[str, ...], bool], ...]]] = {}
        stmts = analysis.statements[:executed]
        for n, st in enumerate(stmts):
            if not st.calls:
                continue
            for i, a in enumerate(st.accesses):
                if a.kind != "bind" or not a.deps or (a.guard is not None and a.guard not in ran):
                    continue
                obj = ns.get(a.root)
                cls = type(obj)
                code = getattr(getattr(cls, "__init__", None), "__code__", None)
                known = self._inits.get(id(code)) if code is not None else None
                attrs = getattr(obj, "__dict__", None)
                if known is None or known[0] is not code or not isinstance(attrs, dict):
                    continue
                called = [
                    st.accesses[j].root
                    for j in a.deps
                    if st.accesses[j].root in st.calls and ns.get(st.accesses[j].root) is cls
                ]
                if not called or any(_touches(later, a.root) for later in stmts[n + 1 :]):
                    continue
                specs = tuple(spec for spec in known[1] if spec[0] in attrs)
                if specs:
                    out[f"{st.index}:{i}"] = (called[0], specs)
        return out

    def _candidates(
        self, named: set[str], reached: dict[str, tuple[str, ...]], ns: dict[str, Any]
    ) -> set[str]:
        """Names whose content the cell could change: the names its statements name, the
        globals of the functions it uses (`reached`), and their aliases."""
        direct = set(named)
        for globs in reached.values():
            direct.update(globs)
        direct &= ns.keys()
        if not direct:
            return set()
        self._sync_index(ns)
        ids: set[int] = set()
        for n in direct:
            ids.add(id(ns[n]))
            ids.update(self._members[n][1])
        out = set(direct)
        rev = self._rev
        for i in ids:
            found = rev.get(i)
            if found:
                out.update(found)
        return out

    def _sync_index(self, ns: dict[str, Any]) -> None:
        """Bring the object index (id and member ids -> names) up to date: only names whose
        binding changed since the last cell are looked into again."""
        members = self._members
        for name, obj in ns.items():
            entry = members.get(name)
            if entry is not None and entry[0] == id(obj):
                continue
            if entry is not None:
                self._unindex(name)
            self._members_of(name, obj)
        if len(members) > len(ns):
            for name in [n for n in members if n not in ns]:
                self._unindex(name)

    def _unindex(self, name: str) -> None:
        entry = self._members.pop(name, None)
        if entry is None:
            return
        for i in (entry[0], *entry[1]):
            names = self._rev.get(i)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._rev[i]

    def _members_of(self, name: str, obj: Any) -> frozenset[int]:
        """Member ids of a name's value, indexed until the name is touched by a cell."""
        cached = self._members.get(name)
        if cached is not None and cached[0] == id(obj):
            return cached[1]
        if cached is not None:
            self._unindex(name)
        if (
            isinstance(obj, (types.ModuleType, types.FunctionType, type))
            or is_immutable_scalar(obj)
            or _OUTPUT_NAME.match(name)
        ):
            members: frozenset[int] = frozenset()
            self._members[name] = (id(obj), members)
            # never an alias of data (nothing can change a scalar in place; IPython's output
            # history is read only where a cell names it)
            return members
        members = frozenset(_member_ids(obj))
        self._members[name] = (id(obj), members)
        rev = self._rev
        rev.setdefault(id(obj), set()).add(name)
        for m in members:
            rev.setdefault(m, set()).add(name)
        return members

    def _alias_groups(self, names: set[str], ns: dict[str, Any]) -> dict[str, set[str]]:
        """For each name: other names bound to the same object or containing/contained in it."""
        by_id: dict[int, list[str]] = {}
        containing: dict[int, list[str]] = {}
        members: dict[str, frozenset[int]] = {}
        for n in names:
            if n not in ns or type(ns[n]) in _SCALAR_TYPES:
                continue  # a builtin scalar holds no state another name could share
            by_id.setdefault(id(ns[n]), []).append(n)
            members[n] = self._members_of(n, ns[n])
            for m in members[n]:
                containing.setdefault(m, []).append(n)
        groups: dict[str, set[str]] = {}
        for n, mem in members.items():
            group = {*by_id.get(id(ns[n]), ()), *containing.get(id(ns[n]), ())}
            for m in mem:
                group.update(by_id.get(m, ()))
            group.discard(n)
            if group:
                groups[n] = group
        return groups

    def _function_globals(
        self,
        analysis: CellAnalysis,
        ns: dict[str, Any],
        ran_slots: bool = False,
        hit: frozenset[int] | None = None,
    ) -> dict[str, tuple[str, ...]]:
        """Globals read when the cell uses a function, class or instance method."""
        out: dict[str, set[str]] = {}
        used = {n for st in analysis.statements for n in (*st.reads, *st.calls)}
        for name in used:
            obj = ns.get(name)
            if isinstance(obj, _CALLABLE_KINDS) and _is_user_callable(obj, self.shell.user_ns):
                found = self._transitive_globals(obj, ns, ran_slots, hit)
                if found:
                    out.setdefault(name, set()).update(found)
        for st in analysis.statements:
            for a in st.accesses:
                # a function kept in a container or an attribute: fs[0](), ops['f']()
                if a.kind == "read" and a.path and a.root in ns:
                    held = _held_at(ns[a.root], a.path)
                    if held is not None and _is_user_callable(held, self.shell.user_ns):
                        found = self._transitive_globals(held, ns, ran_slots, hit)
                        if found:
                            out.setdefault(a.root, set()).update(found)
            for recv, meth in st.method_calls:
                obj = ns.get(recv)
                if obj is None or isinstance(obj, (types.ModuleType, type)):
                    continue
                fn = getattr(type(obj), meth, None)
                fn = getattr(fn, "__func__", fn)
                if isinstance(fn, types.FunctionType) and fn.__globals__ is self.shell.user_ns:
                    found = self._transitive_globals(fn, ns, ran_slots, hit)
                    if found:
                        out.setdefault(recv, set()).update(found)
            # functions defined in this cell and called in it: their static globals
            for info in st.functions:
                if info.name in used and not (ran_slots and info.name in out):
                    out.setdefault(info.name, set()).update(
                        g for g in (*info.global_reads, *info.global_writes) if g in ns
                    )
        return {k: tuple(sorted(v)) for k, v in out.items() if v}

    def _return_flow(
        self, fn: types.FunctionType, ns: dict[str, Any], seen: set[int]
    ) -> set[str] | None:
        """Globals that can flow into `fn`'s return value, through the functions it calls
        (all the globals of those whose flow is not known); None when not known."""
        known = self._returns.get(id(fn.__code__))
        if known is None or known[0] is not fn.__code__:
            return None
        return self._expand_flow(known[1], ns, seen)

    def _expand_flow(self, names: tuple[str, ...], ns: dict[str, Any], seen: set[int]) -> set[str]:
        """`names`, with what flows out of the functions among them."""
        out: set[str] = set()
        for g in names:
            obj = ns.get(g, _MISSING)
            if obj is _MISSING:
                continue
            out.add(g)
            if id(obj) in seen or not _is_user_callable(obj, self.shell.user_ns):
                continue
            seen.add(id(obj))
            sub = self._return_flow(obj, ns, seen) if isinstance(obj, types.FunctionType) else None
            out |= sub if sub is not None else self._transitive_globals(obj, ns, True)
        return out

    def _transitive_globals(
        self,
        root: Any,
        ns: dict[str, Any],
        ran_slots: bool = False,
        hit: frozenset[int] | None = None,
    ) -> set[str]:
        """Globals a function (and the functions it reaches) reads; with `ran_slots`, only
        the reads whose blocks ran during this cell, where the function's blocks are known."""
        seen: set[int] = set()
        names: set[str] = set()
        stack = [root]
        cov = self.markers.cov
        while stack:
            obj = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            for code in _codes_of(obj):
                known = self._fn_reads.get(id(code)) if ran_slots else None
                if known is not None and known[0] is code:
                    globs: Any = [
                        g
                        for g, slot in known[1]
                        if slot is None or (cov[slot] if hit is None else slot in hit)
                    ] + [
                        g for g in self._globals_of_code(code) if g not in {r for r, _ in known[1]}
                    ]
                else:
                    globs = self._globals_of_code(code)
                for g in globs:
                    if g in ns:
                        names.add(g)
                        if _is_user_callable(ns[g], self.shell.user_ns):
                            stack.append(ns[g])
        return names

    def _globals_of_code(self, code: types.CodeType) -> frozenset[str]:
        cached = self._code_globals.get(code)
        if cached is not None:
            return cached
        found: set[str] = set()
        todo = [code]
        while todo:
            c = todo.pop()
            for ins in dis.get_instructions(c):
                if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"):
                    found.add(str(ins.argval))
            todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        result = frozenset(found)
        self._code_globals[code] = result
        return result

    @staticmethod
    def _failed_statement(result: Any, analysis: CellAnalysis) -> int | None:
        exc = getattr(result, "error_in_exec", None)
        if exc is None or not analysis.statements:
            return None
        lineno = None
        tb = exc.__traceback__
        while tb is not None:
            if (
                tb.tb_frame.f_code.co_name == "<module>"
                and tb.tb_frame.f_globals.get("__name__") == "__main__"
            ):
                lineno = tb.tb_lineno
            tb = tb.tb_next
        if lineno is None:
            return 0
        for st in analysis.statements:
            if st.lineno <= lineno <= st.end_lineno:
                return st.index
        return len(analysis.statements) - 1


_AGENT: LineageAgent | None = None


def install(shell: Any | None = None, token: str = "") -> LineageAgent:
    """Install (or re-install) the runtime pass in this kernel and return it."""
    global _AGENT
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if _AGENT is not None:
        _AGENT.uninstall()
    _AGENT = LineageAgent(shell)
    _AGENT.token = token
    _AGENT.install()
    _AGENT._last_ns = _AGENT.user_names()
    return _AGENT


def rearm(token: str, seq: int) -> None:
    """After a cell that sent no report: the same agent, hooks back on (a new one, that
    counts every name as changed, if the agent itself is gone)."""
    if _AGENT is None or _AGENT.token != token:
        install(token=token).seq = seq
        _AGENT._gap = True  # type: ignore[union-attr]
        _AGENT._last_ns = {}  # type: ignore[union-attr]
        return
    _AGENT.rearm(token, seq)


def agent() -> LineageAgent | None:
    """The installed agent, if any."""
    return _AGENT


#: Above this many columns a carried frame is read whole (one version per column costs more
#: than it saves).
CARRY_MAX_COLUMNS = 500


def _carry(
    root: str, path: tuple[Any, ...], before: dict[str, Any], after: dict[str, Any]
) -> tuple[tuple[str, str], ...]:
    """(source part, bound part) for each column of the frame bound to the chain's target
    that came unchanged from `root` (by label; ``v_x`` from ``v`` after a merge); empty when
    the chain's target is not a new frame (the read is then of the whole source)."""
    pd = sys.modules.get("pandas")
    target, computed, suffix = path[0][1]
    if pd is None or len(path) != 1 or target is None or target == root:
        return ()
    src, dst = before.get(root, after.get(root)), after.get(target)
    if not (isinstance(src, pd.DataFrame) and isinstance(dst, pd.DataFrame)):
        return ()
    if dst.shape[1] > CARRY_MAX_COLUMNS or not dst.columns.is_unique:
        return ()
    skip = set(computed)
    out: list[tuple[str, str]] = []
    for label in dst.columns:
        if label in skip:
            continue
        found = frame_columns(src.columns, [label], suffix or None)
        if found:
            out.append((part_text(found[0]), part_text(label)))
    return tuple(out)


def _spread(
    root: str, target: str, before: dict[str, Any], after: dict[str, Any]
) -> tuple[tuple[str, str], ...]:
    """``target = root + [...]``: (``[k]``, ``[k]``) for each element of the list or tuple
    `root` that starts `target` as the very same object; empty (the read is then of the
    whole of `root`) when `root` is not a list or tuple, is longer than `RANGE_MAX_PARTS`,
    or `target` does not start with its elements."""
    src, dst = before.get(root, after.get(root)), after.get(target)
    if type(src) not in (list, tuple) or type(dst) is not type(src):
        return ()
    if len(src) > RANGE_MAX_PARTS or len(dst) < len(src):
        return ()
    if any(dst[k] is not src[k] for k in range(len(src))):
        return ()
    return tuple((part_text(k), part_text(k)) for k in range(len(src)))


def _keyed(obj: Any) -> bool:
    """Values whose parts keep their keys when one is deleted (not sequences)."""
    if isinstance(obj, dict):
        return True
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, pd.DataFrame):
        return True
    return not isinstance(obj, (list, tuple)) and isinstance(getattr(obj, "__dict__", None), dict)


def _held_at(obj: Any, steps: tuple[Any, ...]) -> Any:
    """The object at a constant path of plain keys and attributes, or None."""
    for kind, *rest in steps:
        try:
            if kind == "key" and isinstance(obj, (dict, list, tuple)):
                key = rest[0]
                obj = obj[tuple(key) if isinstance(key, list) else key]
            elif kind == "attr" and isinstance(getattr(obj, "__dict__", None), dict):
                obj = vars(obj).get(rest[0])
            else:
                return None
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def _reaches_all(obj: Any, steps: tuple[Any, ...]) -> bool:
    try:
        return reach(obj, steps)[1]
    except Exception:  # a user __getattr__/__eq__ that raises
        return False


#: Modules that are a random generator's state: their ``seed`` replaces it.
_GENERATORS = frozenset({"random", "numpy.random"})


def _reseeded(
    analysis: CellAnalysis, executed: int, ran: set[int], ns: dict[str, Any]
) -> list[tuple[str, tuple[str, ...] | None]]:
    """(name, part) for each ``random.seed(..)`` / ``np.random.seed(..)`` that ran: the
    generator module reached from the name, as a part of it (None: the name is the module)."""
    out: list[tuple[str, tuple[str, ...] | None]] = []
    for st in analysis.statements[:executed]:
        if not st.method_receivers:
            continue  # no method called on a name: no generator's seed() either
        for a in st.accesses:
            if a.kind != "read" or not a.path or list(a.path[-1]) != ["attr", "seed"]:
                continue
            if a.guard is not None and a.guard not in ran:
                continue
            obj = ns.get(a.root)
            parts: list[str] = []
            for kind, value in a.path[:-1]:
                if kind != "attr" or not isinstance(obj, types.ModuleType):
                    obj = None
                    break
                parts.append(part_text(value, "attr"))
                obj = getattr(obj, value, None)
            if isinstance(obj, types.ModuleType) and obj.__name__ in _GENERATORS:
                out.append((a.root, tuple(parts) or None))
    return out


_CALLABLE_KINDS = (types.FunctionType, type)
"""What `_is_user_callable` can accept: checked first, as most names hold data."""

#: Above this many positions a loop's reads of a sequence count as a read of the whole.
RANGE_MAX_PARTS = 256


def _range_parts(obj: Any, positions: range | None) -> tuple[tuple[str, ...], ...] | None:
    """The element parts ``lst[i]`` reached for each ``i`` in the range a loop ran over;
    None where not a list, tuple or 1-d array, or not within it (then the whole)."""
    if positions is None or len(positions) > RANGE_MAX_PARTS:
        return None
    np = sys.modules.get("numpy")
    if isinstance(obj, (list, tuple)):
        n = len(obj)
    elif np is not None and isinstance(obj, np.ndarray) and obj.ndim == 1:
        n = obj.shape[0]
    else:
        return None
    out: dict[tuple[str, ...], None] = {}
    for i in positions:
        idx = i + n if i < 0 else i
        if not 0 <= idx < n:
            return None
        out[(part_text(idx),)] = None
    return tuple(out)


def _touches(st: StatementInfo, name: str) -> bool:
    """Whether a statement mentions `name` in any way that could change it."""
    return (
        name in st.reads
        or name in st.writes
        or name in st.mutates
        or name in st.method_receivers
        or any(root == name for _, root in st.call_args)
    )


def _executed(analysis: CellAnalysis, failed: int | None) -> int:
    n = len(analysis.statements)
    return n if failed is None else min(failed + 1, n)
