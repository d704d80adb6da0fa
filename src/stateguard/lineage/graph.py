"""Versioned variables, derivation edges and staleness.

`LineageGraph` turns a stream of `CellReport`s into versions ``name@vN``.
It takes values only; it never talks to a kernel.

Invariants:

* A version is created only for a name whose binding or content really changed
  (the runtime pass says so); rebinding to the same object or to an equal
  immutable scalar creates nothing, so nothing downstream goes stale.
* One cell creates at most one version per name, at the last statement that
  rebinds it (or, for an in-place change, at the first statement that could
  have mutated it). Earlier in-cell bindings are *provisional*: readers of them
  inherit their parents directly.
* A version's parents are the versions the creating statement read, resolved at
  that statement (plus, for an in-place change, the name's previous version).
* Staleness is edge-based: version V is stale iff some derivation edge P -> Q
  with Q in ancestors-or-self(V) has an *outdated* P, i.e. the current version L
  of P's name differs from P and L was not itself derived from Q. The second
  clause keeps refinements such as ``df = df.dropna()`` or
  ``a = b + 1`` (b from the old a) from flagging their own inputs.
* An outdated edge P -> Q is *refreshed* when a later version R of Q's own name,
  derived from Q and from L and on V's derivation, re-derived the object with the
  new input (``orders['cost'] = orders.revenue * RATE`` re-run after RATE was
  revised). When both Q and R are in-place stores with known keys, R must
  overwrite every key Q wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.lineage.facts import Access, StatementInfo
from stateguard.lineage.parts import ROWS
from stateguard.lineage.placement import CellIndex
from stateguard.lineage.report import CellReport


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class VariableVersion(_Frozen):
    """One immutable version ``name@vN`` of a variable."""

    name: str
    version: int
    cell: int
    statement: int | None
    kind: str
    """"bind" (rebinding), "mutate" (changed in place as a whole), "store" (this part was
    written), "part" (some parts of this value changed; see their versions) or "derived"
    (a part as it stood in the version of the value that holds it, first read here)."""
    parents: tuple[str, ...] = ()
    summary: str = ""
    keys: tuple[str, ...] | None = None
    """For in-place changes: the constant keys/attributes stored (``['cost']``),
    None when unknown (``.loc[mask, ..]``, a method call, a called function)."""
    shared_with: tuple[str, ...] = ()
    """Names sharing this object whose versions the same cell created (aliases, views)."""
    root: str = ""
    """The variable this is a version of (the name itself, or the name a part belongs to)."""
    parts: tuple[str, ...] = ()
    """The path from the root to the part (``("['cost']",)``); empty for the whole value."""
    seq: int = 0
    """Creation order across all symbols."""

    @property
    def covers(self) -> bool:
        """Whether this version replaces everything under its symbol (not a part change)."""
        return self.kind != "part"

    @property
    def key(self) -> str:
        """``name@vN``."""
        return f"{self.name}@v{self.version}"


class StaleReason(_Frozen):
    """Why a version is stale: the chain back to the superseding write."""

    version: str
    outdated: str
    """The upstream version the derivation used (``P``)."""
    used_by: str
    """The version derived directly from it (``Q``)."""
    superseded_by: str
    """The first later version of the same name."""
    superseding_cell: int
    current: str
    """The current version of that name."""
    chain: tuple[str, ...]
    """Derivation path ``P -> Q -> ... -> version``."""

    def describe(self) -> str:
        """One line a person can read."""
        now = f" (now {self.current})" if self.current != self.superseded_by else ""
        if len(self.chain) > 2:
            # name the value (or part) it read: `s@v1 read df['cost']@v2, derived from ...`
            path = " -> ".join(self.chain)
            return (
                f"{self.version} is stale: it read {self.chain[-2]}, derived from "
                f"{self.outdated} ({path}), superseded by {self.superseded_by} in cell "
                f"{self.superseding_cell}{now}"
            )
        return (
            f"{self.version} is stale: derived from {self.outdated}, superseded by "
            f"{self.superseded_by} in cell {self.superseding_cell}{now}"
        )


class ReadRecord(_Frozen):
    """A read of one version by one statement of a cell."""

    name: str
    """The symbol read: a name or a part of one (``df['cost']``)."""
    version: str
    statement: int
    stale: StaleReason | None = None
    refresh: bool = False
    """The statement re-derived this same variable into a fresh version: a stale read
    that served only to recompute it (the manager does not treat it as a stale use)."""
    carried: bool = False
    """The column was read only to be carried into a new frame (``sub = df[mask]``), whose
    own column derives from it: a stale one is a stale use only where that column of the
    new frame is read."""

    @classmethod
    def build(
        cls, name: str, version: str, statement: int, stale: StaleReason | None, carried: bool
    ) -> ReadRecord:
        """Construct from typed values the graph itself holds, without validation: a cell
        of a few hundred statements makes hundreds of reads, and `model_construct` costs
        more than resolving them."""
        obj = cls.__new__(cls)
        values = {
            "name": name,
            "version": version,
            "statement": statement,
            "stale": stale,
            "refresh": False,
            "carried": carried,
        }
        object.__setattr__(obj, "__dict__", values)
        object.__setattr__(obj, "__pydantic_fields_set__", set(values))
        object.__setattr__(obj, "__pydantic_extra__", None)
        object.__setattr__(obj, "__pydantic_private__", None)
        return obj


class CellRecord(_Frozen):
    """What a cell read and created, with the versions involved."""

    cell: int
    source: str
    reads: tuple[ReadRecord, ...] = ()
    created: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    failed_statement: int | None = None
    syntax_error: str | None = None
    unverified: str | None = None
    """Why this cell's lineage is unknown (no valid report came back: the hooks were
    removed or disabled, or a report was forged). What it read is unknown, not empty; what
    it changed is versioned from the next report, with no parents."""

    @property
    def stale_reads(self) -> tuple[ReadRecord, ...]:
        """Reads of versions that were stale when the cell read them."""
        return tuple(r for r in self.reads if r.stale is not None)

    @property
    def read_stale(self) -> bool:
        """Whether the cell read any stale version."""
        return any(r.stale is not None for r in self.reads)


class _Provisional:
    """An in-cell binding that does not survive the cell: stands for its parents."""

    __slots__ = ("parents",)

    def __init__(self, parents: Iterable[str]) -> None:
        self.parents = tuple(parents)


def _symbol(root: str, parts: Sequence[str]) -> str:
    return root + "".join(parts)


class LineageGraph:
    """Versions, derivation and staleness for one session, at part granularity.

    A *symbol* is a name or a part of one reached by a constant path
    (``df['cost']``, ``d['k']['j']``, ``box.w``). Every symbol has its own
    versions. A write to a part versions that part and records, on each value
    holding it, a "part" version (readers of the whole see the change; readers
    of other parts do not). Rebinding or an unattributed in-place change of a
    value replaces everything under it. A part first read before any write of
    its own gets a "derived" version standing for it as its holder had it.

    Staleness is edge-based: V is stale iff some edge P -> Q on its derivation
    has an outdated P: the symbol of P now resolves to a newer version L, L was
    not derived from Q, and L was not created in Q's own cell (a value is not
    made stale by a later write in the cell that computed it).
    """

    def __init__(self, *, by_value: bool = True) -> None:
        self.by_value = by_value
        """Track values, not bindings: a name rebound to a new object that holds what the
        old one held is no new version (`CellReport.restated`), as an equal scalar never
        is; ``False`` versions every rebinding (the shared cases' rule, "rebound")."""
        self._versions: dict[str, VariableVersion] = {}
        self._by_name: dict[str, list[str]] = {}
        self._ancestors: dict[str, frozenset[str]] = {}
        self._live: set[str] = set()
        self._superseded: set[str] = set()
        self._cells: list[CellRecord] = []
        self._prefixes: dict[str, tuple[str, ...]] = {}
        self._children: dict[str, dict[str, None]] = {}
        self._cover: dict[str, str] = {}  # symbol -> its latest covering version
        self._seq = 0

    # -- queries ------------------------------------------------------------

    @property
    def cells(self) -> tuple[CellRecord, ...]:
        """Every recorded cell, in execution order."""
        return tuple(self._cells)

    def versions(self, name: str) -> tuple[VariableVersion, ...]:
        """All versions of a symbol (a name or a part), oldest first."""
        return tuple(self._versions[k] for k in self._by_name.get(name, ()))

    def version(self, key: str) -> VariableVersion:
        """The version with key ``name@vN``; KeyError if unknown."""
        return self._versions[key]

    def latest(self, name: str) -> VariableVersion | None:
        """The latest version of a symbol's own (even if the name was since deleted)."""
        keys = self._by_name.get(name)
        return self._versions[keys[-1]] if keys else None

    def current(self, name: str) -> VariableVersion | None:
        """The version a read of the symbol sees now: its own latest, unless a value
        holding it was since replaced as a whole."""
        key = self._effective(name)
        return self._versions[key] if key is not None else None

    def parts_of(self, name: str) -> tuple[str, ...]:
        """Symbols of the parts of `name` that have versions of their own."""
        return tuple(self._children.get(name, ()))

    def live_names(self) -> tuple[str, ...]:
        """Names currently bound in the namespace that have versions."""
        return tuple(sorted(self._live))

    def derived_from(self, key: str) -> tuple[str, ...]:
        """Direct parents of a version."""
        return self._versions[key].parents

    def ancestors(self, key: str) -> frozenset[str]:
        """Every version `key` was (transitively) derived from."""
        return self._ancestors[key]

    def why_stale(self, key: str) -> StaleReason | None:
        """Why `key` is stale (the earliest outdated edge), or None if it is fresh."""
        if self._ancestors[key].isdisjoint(self._superseded):
            return None
        for q in sorted((*self._ancestors[key], key), key=self._order):
            for p in self._versions[q].parents:
                reason = self._outdated_edge(p, q, key)
                if reason is not None:
                    return reason
        return None

    def is_stale(self, key: str) -> bool:
        """Whether `key` is stale now."""
        return self.why_stale(key) is not None

    def stale_live_versions(self) -> dict[str, StaleReason]:
        """Current versions of live names and of their parts that are stale, with reasons."""
        out: dict[str, StaleReason] = {}
        for name in sorted(self._live):
            for sym in (name, *self._descendants(name)):
                v = self.current(sym)
                if v is None or v.key in out:
                    continue
                if (v.name == sym or sym == name) and (r := self.why_stale(v.key)) is not None:
                    out[v.key] = r
        return out

    def cells_with_stale_reads(self) -> tuple[CellRecord, ...]:
        """Cells that read at least one version that was stale at the time."""
        return tuple(c for c in self._cells if c.read_stale)

    def _descendants(self, name: str) -> list[str]:
        out: list[str] = []
        todo = list(self._children.get(name, ()))
        while todo:
            sym = todo.pop()
            out.append(sym)
            todo.extend(self._children.get(sym, ()))
        return out

    def _order(self, key: str) -> tuple[int, int, int, str]:
        v = self._versions[key]
        # the key breaks ties (a derived part shares its holder's seq): ancestors are a set,
        # whose order changes from run to run
        return (v.cell, v.statement if v.statement is not None else -1, v.seq, key)

    def _effective(self, sym: str) -> str | None:
        """The version a read of `sym` resolves to now (None: never versioned, nor any holder)."""
        best: str | None = None
        best_seq = -1
        own = self._by_name.get(sym)
        if own:
            best, best_seq = own[-1], self._versions[own[-1]].seq
        for prefix in self._prefixes.get(sym, ()):
            cover = self._cover.get(prefix)
            if cover is not None and self._versions[cover].seq > best_seq:
                best, best_seq = cover, self._versions[cover].seq
        return best

    def _superseder(self, p: str) -> str | None:
        """The first version that replaced `p` for readers of its symbol."""
        pv = self._versions[p]
        keys = self._by_name[pv.name]
        idx = keys.index(p)
        cands = [keys[idx + 1]] if idx + 1 < len(keys) else []
        for prefix in self._prefixes.get(pv.name, ()):
            for k in self._by_name.get(prefix, ()):
                v = self._versions[k]
                if v.seq > pv.seq and v.covers:
                    cands.append(k)
                    break
        return min(cands, key=lambda k: self._versions[k].seq) if cands else None

    def _outdated_edge(self, p: str, q: str, target: str) -> StaleReason | None:
        pv = self._versions[p]
        qv = self._versions[q]
        if qv.kind == "derived" and qv.parents == (p,):
            return None  # a part as its holder had it: checked through the part itself
        if pv.name == "_":
            return None  # IPython's last output: its readers depend on what it came from
        current = self._effective(pv.name)
        if current is None or current == p or q == current or q in self._ancestors[current]:
            return None
        if self._versions[current].cell == qv.cell:
            return None  # superseded only later in the cell that computed q
        if self._refreshed(q, current, target):
            return None
        nxt = self._superseder(p) or current
        return StaleReason(
            version=target,
            outdated=p,
            used_by=q,
            superseded_by=nxt,
            superseding_cell=self._versions[nxt].cell,
            current=current,
            chain=(p, *self._path(q, target)),
        )

    def _refreshed(self, q: str, current: str, target: str) -> bool:
        qv = self._versions[q]
        lv = self._versions[current]
        for r in (*self._ancestors[target], target):
            rv = self._versions[r]
            if (
                rv.name == qv.name
                and q in self._ancestors[r]
                and lv.cell == rv.cell
                and lv.name in rv.shared_with
            ):
                return True  # one object changed under both names at once (alias, view)
            if (
                rv.name == qv.name
                and r != q
                and q in self._ancestors[r]
                and (current in self._ancestors[r])
                and (qv.keys is None or rv.keys is None or set(qv.keys) <= set(rv.keys))
                and self._covered_between(qv, rv)
            ):
                return True
        return False

    def _covered_between(self, qv: VariableVersion, rv: VariableVersion) -> bool:
        """Every in-place version between Q and R stored only keys that R overwrote."""
        for key in self._by_name[qv.name]:
            w = self._versions[key]
            if w.kind == "part":
                continue  # its parts carry their own versions, checked edge by edge
            if qv.version < w.version < rv.version and (
                w.kind != "mutate"
                or w.keys is None
                or rv.keys is None
                or not set(w.keys) <= set(rv.keys)
            ):
                return False
        return True

    def _path(self, start: str, end: str) -> tuple[str, ...]:
        """A derivation path start -> ... -> end (start in ancestors-or-self of end)."""
        path = [end]
        node = end
        while node != start:
            parents = self._versions[node].parents
            if start in parents:
                node = start
            else:
                # the same path on every run: parents are ordered by how the kernel happened
                # to list what changed, so pick by what the versions are
                node = min(
                    (p for p in parents if start in self._ancestors[p]), key=self._structural
                )
            path.append(node)
        return tuple(reversed(path))

    def _structural(self, key: str) -> tuple[int, int, str, int]:
        v = self._versions[key]
        return (v.cell, v.statement if v.statement is not None else -1, v.name, v.version)

    # -- updates ------------------------------------------------------------

    def record_deleted(self, names: list[str] | tuple[str, ...]) -> None:
        """Names were removed from the namespace outside any tracked cell."""
        self._live.difference_update(names)

    def record_restart(self) -> None:
        """The kernel restarted: nothing is live any more (history is kept)."""
        self._live.clear()

    def record_cell(self, report: CellReport) -> CellRecord:
        """Apply one cell's report; returns what the cell read and created."""
        self._apply_gap(report)
        if self.by_value and report.restated:
            report = _restated_as_values(report)
        if self.by_value and report.unchanged:
            report = self._stale_restatements_rebound(report)
        return _CellPass(self, report).run()

    def _stale_restatements_rebound(self, report: CellReport) -> CellReport:
        """``report`` with the names the cell wrote with the value they held (`unchanged`)
        rebound when their current version is stale, or becomes stale in this very cell.

        Keeping the version of a value written again unchanged keeps its readers fresh
        (`by_value`), but it also keeps its ancestry: a cell that rewrites ``df['c']``
        (with the same values) and computes ``g = df.groupby(..)['c'].sum()`` again would
        leave ``g`` at the version computed from the old ``df['c']``, stale, although the
        cell just computed it again from the current one. Such a version has nothing to
        keep fresh (its readers derive from what was rewritten): the write is a new
        version, whose parents are what the statement read (so it is stale only if those
        are)."""
        changed = {*report.rebound, *report.mutated, *report.mutated_parts}
        refreshed = {}
        for name in report.unchanged:
            if name not in report.analysis.writes or name in changed:
                continue  # an object changed in place (``v *= 2``) is a mutation
            current = self.current(name)
            if current is None:
                continue
            roots = {
                self._versions[a].root or self._versions[a].name
                for a in self.ancestors(current.key)
            }
            if roots & changed or self.why_stale(current.key) is not None:
                refreshed[name] = current.summary
        if not refreshed:
            return report
        return report.model_copy(
            update={
                "rebound": {**report.rebound, **refreshed},
                "unchanged": tuple(n for n in report.unchanged if n not in refreshed),
            }
        )

    def record_unverified(self, source: str, reason: str) -> CellRecord:
        """A cell ran but sent no valid report: record that, not "it read nothing"."""
        rec = CellRecord(cell=len(self._cells), source=source, unverified=reason)
        self._cells.append(rec)
        return rec

    def _apply_gap(self, report: CellReport) -> None:
        """Changes made by unverified cells, found when the runtime pass was armed again:
        new versions derived from the old ones only (what else they came from is unknown),
        so whatever was derived from the old ones is stale."""
        if not (report.gap_rebound or report.gap_mutated or report.gap_deleted):
            return
        cell = next(
            (c.cell for c in reversed(self._cells) if c.unverified is not None),
            len(self._cells) - 1,
        )
        for name, summary in (*report.gap_rebound.items(), *report.gap_mutated.items()):
            prev = self.current(name) if name in self._live else None
            # derived from what it was (so no staleness it carried is lost) and from
            # nothing known: readers of the old version are stale
            self._add(
                root=name,
                parts=(),
                kind="mutate" if name in report.gap_mutated else "bind",
                cell=cell,
                statement=None,
                parents=(prev.key,) if prev is not None else (),
                summary=summary,
            )
            self._live.add(name)
        self._live.difference_update(report.gap_deleted)

    # -- version creation (used by the cell pass) ----------------------------

    def _register(self, root: str, parts: Sequence[str]) -> str:
        sym = _symbol(root, parts)
        if sym not in self._prefixes:
            prefixes = tuple(_symbol(root, parts[:i]) for i in range(len(parts)))
            self._prefixes[sym] = prefixes
            if prefixes:
                self._children.setdefault(prefixes[-1], {})[sym] = None
                self._register(root, parts[:-1])
        return sym

    def _add(
        self,
        *,
        root: str,
        parts: Sequence[str],
        kind: str,
        cell: int,
        statement: int | None,
        parents: Iterable[str],
        summary: str = "",
        keys: tuple[str, ...] | None = None,
        shared_with: tuple[str, ...] = (),
        seq: int | None = None,
    ) -> str:
        sym = self._register(root, parts)
        if seq is None:
            self._seq += 1
            seq = self._seq
        prev = self._by_name.get(sym)
        version = VariableVersion(
            name=sym,
            version=len(prev or ()) + 1,
            cell=cell,
            statement=statement,
            kind=kind,
            parents=tuple(dict.fromkeys(parents)),
            summary=summary,
            keys=keys,
            shared_with=shared_with,
            root=root,
            parts=tuple(parts),
            seq=seq,
        )
        key = version.key
        anc: set[str] = set(version.parents)
        for p in version.parents:
            anc |= self._ancestors[p]
        self._versions[key] = version
        self._ancestors[key] = frozenset(anc)
        if prev:
            self._superseded.add(prev[-1])
        self._by_name.setdefault(sym, []).append(key)
        if version.covers:
            self._cover[sym] = key
            for d in self._descendants(sym):
                latest = self._by_name.get(d)
                if latest:
                    self._superseded.add(latest[-1])
        return key

    def _resolve(self, root: str, parts: Sequence[str], cell: int, statement: int) -> str | None:
        """The version a read of the symbol sees, materializing a derived part if needed."""
        sym = _symbol(root, parts)
        if sym not in self._prefixes and parts:
            self._register(root, parts)
        eff = self._effective(sym)
        if eff is None or not parts or self._versions[eff].name == sym:
            return eff
        ev = self._versions[eff]
        return self._add(
            root=root,
            parts=parts,
            kind="derived",
            cell=ev.cell,
            statement=ev.statement,
            parents=(eff,),
            summary=ev.summary,
            seq=ev.seq,
        )

    def _holder_version(
        self, root: str, parts: Sequence[str], cell: int, statement: int, new_parts: list[str]
    ) -> str:
        """A "part" version of the value at `parts` after some of its parts changed."""
        sym = self._register(root, parts)
        base = self._effective(sym)
        parents: list[str] = []
        base_seq = -1
        if base is not None:
            bv = self._versions[base]
            if bv.name == sym and bv.kind == "part":
                cover = self._cover_of(sym)
                if cover is not None:
                    parents.append(cover)
                    base_seq = self._versions[cover].seq
            else:
                parents.append(base)
                base_seq = bv.seq
        for child in self._children.get(sym, ()):
            eff = self._effective(child)
            if (
                eff is not None
                and self._versions[eff].name == child
                and (self._versions[eff].seq > base_seq or child in new_parts)
            ):
                parents.append(eff)
        return self._add(
            root=root, parts=parts, kind="part", cell=cell, statement=statement, parents=parents
        )

    def _cover_of(self, sym: str) -> str | None:
        """The newest covering version governing `sym` (its own or a holder's)."""
        best: str | None = self._cover.get(sym)
        best_seq = self._versions[best].seq if best else -1
        for prefix in self._prefixes.get(sym, ()):
            c = self._cover.get(prefix)
            if c is not None and self._versions[c].seq > best_seq:
                best, best_seq = c, self._versions[c].seq
        return best


def _restated_as_values(report: CellReport) -> CellReport:
    """``report`` with each restated name (`CellReport.restated`) unchanged, when its new
    object holds the old value, or changed only in the columns that differ."""
    rebound = dict(report.rebound)
    unchanged = list(report.unchanged)
    mutated = dict(report.mutated)
    mutated_parts = dict(report.mutated_parts)
    reframed = list(report.reframed)
    for name, changed in report.restated.items():
        summary = rebound.pop(name, None)
        if summary is None:
            continue
        if not changed:
            unchanged.append(name)
            continue
        mutated[name] = summary
        mutated_parts[name] = tuple((p,) for p in changed)
        reframed.append(name)
    return report.model_copy(
        update={
            "rebound": rebound,
            "unchanged": tuple(unchanged),
            "mutated": mutated,
            "mutated_parts": mutated_parts,
            "reframed": tuple(reframed),
        }
    )


class _CellPass:
    """Applies one cell report to a graph: reads, then versions, statement by statement."""

    def __init__(self, graph: LineageGraph, report: CellReport) -> None:
        self.g = graph
        self.report = report
        self.cell = len(graph._cells)
        # the guarded blocks that ran (None: every block counts as run)
        self._ran = None if report.ran_blocks is None else frozenset(report.ran_blocks)
        self.stale_reads = 0
        """Reads of stale versions so far (the refresh pass looks only when there are)."""

    def run(self) -> CellRecord:
        g, report, cell = self.g, self.report, self.cell
        analysis = report.analysis
        if analysis.syntax_error is not None:
            rec = CellRecord(cell=cell, source=report.source, syntax_error=analysis.syntax_error)
            g._cells.append(rec)
            return rec
        stmts = analysis.statements[: report.executed_statements]
        index = CellIndex(report, stmts)
        placement = index.place_changes()
        self.index = index
        whole_mutated = {n for n in report.mutated if n not in report.mutated_parts}
        writes_at: dict[int, list[str]] = {}
        for name, idx in placement.items():
            if name in report.rebound or name in whole_mutated:
                writes_at.setdefault(idx, []).append(name)
        part_changes = self._runtime_parts(stmts, placement)

        pending: dict[str, _Provisional] = {}
        reads: list[ReadRecord] = []
        created: list[str] = []
        extra_reads_of = index.mutation_reads()
        unchanged = set(report.unchanged)
        for st in stmts:
            first_read = len(reads)
            by_access, resolved = self._reads(st, index, pending, reads)
            parents = tuple(resolved)
            for name in (*st.writes, *st.mutates, *st.inplace_calls):
                if placement.get(name, -1) > st.index and name in pending:
                    pending[name] = _Provisional((*pending[name].parents, *parents))
                elif (
                    placement.get(name) != st.index
                    and name in st.writes
                    and (name not in unchanged)
                ):
                    pending[name] = _Provisional(self._bind_parents(st, name, by_access, parents))
            for name in self._in_bind_order(st, writes_at.get(st.index) or ()):
                pending.pop(name, None)
                created.extend(
                    self._new_whole(
                        name,
                        st,
                        index,
                        self._bind_parents(st, name, by_access, parents, pending),
                        extra_reads_of.get(name, ()),
                        by_access,
                    )
                )
            if st.mutates or st.inplace_calls or st.deletes or st.index in part_changes:
                created.extend(self._part_writes(st, by_access, parents, part_changes))
            for i in range(first_read, len(reads)) if self.stale_reads else ():
                r = reads[i]
                if r.stale is None:
                    continue
                root = g._versions[r.version].root or r.name
                if root in writes_at.get(st.index, ()) or r.name in self._stored_here(st):
                    new = g.current(r.name)
                    if new is not None and g.why_stale(new.key) is None:
                        reads[i] = r.model_copy(update={"refresh": True})
        for name in report.deleted:
            g._live.discard(name)
        rec = CellRecord(
            cell=cell,
            source=report.source,
            reads=tuple(reads),
            created=tuple(created),
            unchanged=report.unchanged,
            deleted=report.deleted,
            failed_statement=report.failed_statement,
        )
        g._cells.append(rec)
        return rec

    # -- reads ---------------------------------------------------------------

    def _access_parts(self, st: StatementInfo, i: int, access: Access) -> list[tuple[str, ...]]:
        if not access.path:
            return [()]
        found = self.report.paths.get(f"{st.index}:{i}")
        if found is None:
            return [()]  # not reached part by part: the whole value
        # empty: a merged column looked up on the side that does not hold it
        return [tuple(p) for p in found]

    def _reads(
        self,
        st: StatementInfo,
        index: CellIndex,
        pending: dict[str, _Provisional],
        reads: list[ReadRecord],
    ) -> tuple[dict[int, list[str]], dict[str, None]]:
        """Resolve a statement's reads that ran; (per read access: versions, all versions)."""
        g, report = self.g, self.report
        by_access: dict[int, list[str]] = {}
        resolved: dict[str, None] = {}
        seen_roots: set[str] = set()
        own = report.statement_globals.get(st.index)  # what this statement's calls reached

        live, by_name = g._live, g._by_name
        ancestors, superseded = g._ancestors, g._superseded

        def read(root: str, parts: Sequence[str], carried: bool = False) -> list[str]:
            if root in pending:
                out = list(pending[root].parents)
                resolved.update(dict.fromkeys(out))
                return out
            versions = by_name.get(root)
            if root not in live or not versions:
                return []
            if parts:
                key = g._resolve(root, parts, self.cell, st.index)
                if key is None:
                    return []
            else:
                key = versions[-1]  # a name has no holder: its own latest version is current
            resolved.setdefault(key)
            stale = None if ancestors[key].isdisjoint(superseded) else g.why_stale(key)
            if stale is not None:
                self.stale_reads += 1
            reads.append(ReadRecord.build(g._versions[key].name, key, st.index, stale, carried))
            return [key]

        ran, any_carried = self._ran, bool(report.carried)
        for i, access in enumerate(st.accesses):
            if access.kind != "read" or (
                access.guard is not None and ran is not None and access.guard not in ran
            ):
                continue
            seen_roots.add(access.root)
            got: list[str] = []
            carried = any_carried and f"{st.index}:{i}" in report.carried
            if access.path:
                for parts in self._access_parts(st, i, access):
                    got += read(access.root, parts, carried)
            else:
                got += read(access.root, (), carried)
            called = (
                own.get(access.root, ()) if own is not None
                else report.function_globals.get(access.root, ())
            )  # fmt: skip
            if called:
                flows = report.return_globals.get(access.root)
                if access.path and access.path[0][0] == "ret":
                    # f()[k]: the globals that flow into that item, when known
                    key = f"{access.root}[{access.path[0][1]}]"
                    flows = report.return_globals.get(key, flows)
                for gname in called:
                    versions = read(gname, ())
                    if flows is None or gname in flows:
                        got += versions  # what the value read here came from
            by_access[i] = got
        # reads that are not accesses: globals of called functions, names from the
        # older name-level facts (the runtime resolved them; a report may lack accesses)
        for name in index.reads[st.index]:
            if name not in seen_roots and (not st.accesses or name in pending):
                # a store into a value bound earlier in this cell carries what built it
                read(name, ())
        for name in st.calls:
            if name not in seen_roots:
                calls = own if own is not None else report.function_globals
                for gname in calls.get(name, ()):
                    read(gname, ())
        return by_access, resolved

    # -- writes --------------------------------------------------------------

    def _bind_parents(
        self,
        st: StatementInfo,
        name: str,
        by_access: dict[int, list[str]],
        parents: tuple[str, ...],
        pending: dict[str, _Provisional] | None = None,
    ) -> tuple[str, ...]:
        """Parents of a rebinding of `name`: the reads its value came from, when known."""
        binds = [
            a for a in st.accesses
            if a.kind == "bind" and a.root == name and self.report.ran(a.guard)
        ]  # fmt: skip
        if not binds or any(a.deps is None for a in binds) or self._moved(st, binds):
            return (*parents, *self._inner_flow(st, name, pending or {}))
        out: dict[str, None] = {}
        for a in binds:
            for j in a.deps or ():
                out.update(dict.fromkeys(by_access.get(j, ())))
        return tuple(out)

    def _moved(self, st: StatementInfo, binds: list[Access]) -> bool:
        """Whether a bind took an element by position (``for v in lst``, ``a, b = lst``) of
        a value the cell changed (the runtime then read it whole): the element may be one
        the statement itself put there, so the bind depends on all the statement read."""
        for a in binds:
            for j in a.deps or ():
                dep = st.accesses[j]
                if (
                    dep.path
                    and any(step[0] in ("elem", "range") for step in dep.path)
                    and f"{st.index}:{j}" not in self.report.paths
                ):
                    return True
        return False

    def _inner_flow(
        self, st: StatementInfo, name: str, pending: dict[str, _Provisional]
    ) -> list[str]:
        """Versions of the names the statement bound and then read itself (``bar`` in
        ``with make() as bar: x = bar + 7``), for a value computed from all its reads."""
        g, out = self.g, []
        for a in st.accesses:
            if a.kind != "flow" or a.root == name or not self.report.ran(a.guard):
                continue
            if a.root in pending:
                out.extend(pending[a.root].parents)
                continue
            cur = g.current(a.root)
            if cur is not None and cur.cell == self.cell and cur.statement == st.index:
                out.append(cur.key)
        return out

    @staticmethod
    def _in_bind_order(st: StatementInfo, names: Sequence[str]) -> list[str]:
        """`names` in the order the statement first binds them (unbound ones last)."""
        if len(names) < 2:
            return list(names)
        first: dict[str, int] = {}
        for i, a in enumerate(st.accesses):
            if a.kind == "bind":
                first.setdefault(a.root, i)
        return sorted(names, key=lambda n: first.get(n, len(st.accesses)))

    def _new_whole(
        self,
        name: str,
        st: StatementInfo,
        index: CellIndex,
        parents: tuple[str, ...],
        extra_reads: tuple[str, ...],
        by_access: dict[int, list[str]],
    ) -> list[str]:
        g, report = self.g, self.report
        mutated = name in report.mutated and name not in report.rebound
        prev = g.current(name)
        same_object = {
            a for a in report.aliases.get(name, ()) if a in report.mutated or a in report.rebound
        }
        all_parents: dict[str, None] = {
            p: None for p in parents if g._versions[p].root not in same_object
        }
        if mutated:
            for n in extra_reads:
                cur = g.current(n)
                if n in same_object:
                    continue
                if cur is not None and n in g._live and cur.key not in all_parents:
                    all_parents.setdefault(cur.key)
            if prev is not None and name in g._live:
                all_parents.setdefault(prev.key)
            if prev is not None:
                all_parents.update(dict.fromkeys(self._live_parts(name)))
        g._seq += 1
        seq = g._seq
        created: list[str] = []
        literal = (
            []
            if mutated
            else [
                *self._literal_parts(st, name, by_access, seq),
                *self._carried_parts(st, name, by_access, seq),
                *self._instance_parts(st, name, by_access, seq),
            ]
        )
        all_parents.update(dict.fromkeys(literal))
        key = g._add(
            root=name,
            parts=(),
            kind="mutate" if mutated else "bind",
            cell=self.cell,
            statement=st.index,
            parents=all_parents,
            summary=(report.mutated if mutated else report.rebound).get(name, ""),
            keys=index.mutation_keys(name) if mutated else None,
            shared_with=tuple(sorted(same_object)),
            seq=seq,
        )
        g._live.add(name)
        created.append(key)
        created.extend(literal)
        return created

    def _live_parts(self, name: str) -> list[str]:
        """Own versions of parts of `name` written after it was last replaced as a whole
        (an in-place change of the whole derives from them)."""
        g = self.g
        cover = g._cover_of(name)
        since = g._versions[cover].seq if cover is not None else -1
        out = []
        for child in g._descendants(name):
            eff = g._effective(child)
            if eff is not None and g._versions[eff].name == child and g._versions[eff].seq > since:
                out.append(eff)
        return out

    def _literal_parts(
        self, st: StatementInfo, name: str, by_access: dict[int, list[str]], seq: int
    ) -> list[str]:
        """Parts built by the literal bound to `name` (same creation order as the bind)."""
        g = self.g
        out: list[str] = []
        accesses = st.accesses
        for i, a in enumerate(accesses):
            if not (a.kind == "bind" and a.root == name and self.report.ran(a.guard)):
                continue
            j = i + 1
            parts: list[str] = []
            while j < len(accesses) and accesses[j].literal and accesses[j].root == name:
                la = accesses[j]
                deps: dict[str, None] = {}
                for d in la.deps or ():
                    deps.update(dict.fromkeys(by_access.get(d, ())))
                step = la.path[0]
                if step[0] == "elem":
                    # counted from the end (after a spread): the runtime says which index
                    found = self._access_parts(st, j, la)
                    if found == [()] or len(found) != 1:
                        j += 1
                        continue  # not resolved: the element is the whole value's
                    part = found[0][0]
                else:
                    part = f"[{step[1]!r}]"
                parts.append(
                    g._add(
                        root=name, parts=(part,), kind="store", cell=self.cell,
                        statement=st.index, parents=deps, seq=seq,
                    )
                )  # fmt: skip
                j += 1
            out = parts  # the last bind of the name in the statement wins
        return out

    def _instance_parts(
        self, st: StatementInfo, name: str, by_access: dict[int, list[str]], seq: int
    ) -> list[str]:
        """Attributes ``__init__`` set on the instance bound to `name`: each derives from the
        globals its value read and, if it read a parameter, from the call's arguments."""
        g = self.g
        out: list[str] = []
        for i, a in enumerate(st.accesses):
            if not (a.kind == "bind" and a.root == name and self.report.ran(a.guard)):
                continue
            found = self.report.instances.get(f"{st.index}:{i}")
            if found is None:
                out = []  # the last bind of the name in the statement wins
                continue
            cls, specs = found
            args: dict[str, None] = {}
            for j in a.deps or ():
                if st.accesses[j].root != cls:
                    args.update(dict.fromkeys(by_access.get(j, ())))
            out = []
            for attr, globs, uses_args in specs:
                parents: dict[str, None] = {}
                for gname in globs:
                    cur = g.current(gname) if gname in g._live else None
                    if cur is not None:
                        parents.setdefault(cur.key)
                if uses_args:
                    parents.update(args)
                out.append(
                    g._add(
                        root=name, parts=(f".{attr}",), kind="store", cell=self.cell,
                        statement=st.index, parents=parents, seq=seq,
                    )
                )  # fmt: skip
        return out

    def _carried_parts(
        self, st: StatementInfo, name: str, by_access: dict[int, list[str]], seq: int
    ) -> list[str]:
        """Columns a frame-valued chain carried into `name` (``df2 = df[mask]``, a merge):
        each derives from the source column and from what chose the rows, and the rows
        part from the latter alone."""
        g = self.g
        pairs: dict[str, dict[str, None]] = {}
        chosen: dict[str, None] = {}
        spread: list[str] = []
        for j, a in enumerate(st.accesses):
            if a.kind != "read" or j not in by_access:
                continue
            if a.path and a.path[0][0] == "spread":
                # lst = y + [..]: each element of y carried over depends on that element only
                got = self.report.carried.get(f"{st.index}:{j}")
                if not got or a.path[0][1] != name or a.root not in g._live:
                    continue
                for src, dst in got:
                    v = g._resolve(a.root, (src,), self.cell, st.index)
                    if v is not None:
                        spread.append(
                            g._add(
                                root=name, parts=(dst,), kind="store", cell=self.cell,
                                statement=st.index, parents=(v,), seq=seq,
                            )
                        )  # fmt: skip
                continue
            if a.path and a.path[0][0] == "carry":
                got = self.report.carried.get(f"{st.index}:{j}")
                if not got or a.path[0][1][0] != name or a.root not in g._live:
                    continue
                for src, dst in got:
                    eff = g._effective(_symbol(a.root, (src,)))
                    if eff is not None:
                        pairs.setdefault(dst, {})[eff] = None
            else:
                chosen.update(dict.fromkeys(by_access[j]))
        if not pairs:
            return spread
        out: list[str] = list(spread)
        for dst, parents in pairs.items():
            out.append(
                g._add(
                    root=name, parts=(dst,), kind="store", cell=self.cell,
                    statement=st.index, parents=(*parents, *chosen), seq=seq,
                )
            )  # fmt: skip
        out.append(
            g._add(
                root=name, parts=(ROWS,), kind="store", cell=self.cell,
                statement=st.index, parents=tuple(chosen), seq=seq,
            )
        )  # fmt: skip
        return out

    def _stored_here(self, st: StatementInfo) -> set[str]:
        out: set[str] = set()
        for i, a in enumerate(st.accesses):
            if a.kind in ("store", "delete") and not a.literal:
                for parts in self._access_parts(st, i, a):
                    if parts:
                        out.add(_symbol(a.root, parts))
        return out

    def _runtime_parts(
        self, stmts: Sequence[StatementInfo], placement: dict[str, int]
    ) -> dict[int, dict[str, list[tuple[str, ...]]]]:
        """Part changes the runtime saw that no constant store of the cell explains:
        statement -> root -> part paths (placed at the statement that could have done it)."""
        static: dict[str, set[tuple[str, ...]]] = {}
        for st in stmts:
            for i, a in enumerate(st.accesses):
                if a.kind in ("store", "delete") and not a.literal and self.report.ran(a.guard):
                    for parts in self._access_parts(st, i, a):
                        static.setdefault(a.root, set()).add(parts)
        out: dict[int, dict[str, list[tuple[str, ...]]]] = {}
        for name, paths in self.report.mutated_parts.items():
            if name in self.report.rebound:
                continue
            extra = [tuple(p) for p in paths if tuple(p) not in static.get(name, set())]
            if extra:
                at = placement.get(name, stmts[-1].index if stmts else 0)
                out.setdefault(at, {})[name] = extra
        return out

    def _part_writes(
        self,
        st: StatementInfo,
        by_access: dict[int, list[str]],
        parents: tuple[str, ...],
        runtime_parts: dict[int, dict[str, list[tuple[str, ...]]]],
    ) -> list[str]:
        """Versions for the parts this statement wrote, then for the values holding them."""
        g, report = self.g, self.report
        written: dict[str, list[tuple[str, ...]]] = {}
        created: list[str] = []
        for i, a in enumerate(st.accesses):
            if a.kind not in ("store", "delete") or a.literal or not report.ran(a.guard):
                continue
            filled = a.root in self.index.filled_by_parts and a.root in report.rebound
            if not filled and (a.root not in report.mutated_parts or a.root in report.rebound):
                continue
            deps = parents
            if a.deps is not None:
                found: dict[str, None] = {}
                for j in a.deps:
                    found.update(dict.fromkeys(by_access.get(j, ())))
                deps = tuple(found)
            for parts in self._access_parts(st, i, a):
                if not parts:
                    continue
                created.append(
                    g._add(
                        root=a.root, parts=parts, kind="store", cell=self.cell,
                        statement=st.index, parents=deps,
                    )
                )  # fmt: skip
                written.setdefault(a.root, []).append(parts)
        for name, paths in written.items():
            created.extend(self._holders(st, name, paths))
        direct = {*st.reads, *st.mutates, *st.inplace_calls, *st.method_receivers}
        here = runtime_parts.get(st.index, {})
        for name in sorted(here, key=lambda n: n not in direct):  # aliases after their sources
            # the same object changed under another name in this cell: derived from that too
            shared = [
                v.key
                for a in report.aliases.get(name, ())
                if (a in report.mutated or a in report.rebound)
                and (v := g.latest(a))
                and v.cell == self.cell
            ]
            # an in-place method of the value changed these parts: each derives from its
            # own previous version and from what else the statement read, not from the
            # whole value the method was called on (that would tie every part to all others)
            reframed = name in report.reframed
            others: dict[str, None] = {}
            for j, versions in by_access.items():
                a = st.accesses[j]
                if reframed:
                    # df = df.assign(..): what the frame carried through is not an input
                    if a.root == name and a.path and a.path[0][0] == "carry":
                        continue
                elif a.root == name and self._access_parts(st, j, a) == [()]:
                    continue
                others.update(dict.fromkeys(versions))
            computed = self._computed_deps(st, name, by_access) if reframed else {}
            for parts in here[name]:
                if parts in computed:
                    created.append(
                        g._add(
                            root=name, parts=parts, kind="store", cell=self.cell,
                            statement=st.index, parents=computed[parts],
                        )
                    )  # fmt: skip
                    continue
                prev = g._effective(_symbol(name, parts))
                deps = (*others, *shared, *((prev,) if prev is not None else ()))
                created.append(
                    g._add(
                        root=name, parts=parts, kind="store", cell=self.cell,
                        statement=st.index, parents=deps,
                    )
                )  # fmt: skip
            if name not in report.reseeded:
                created.extend(self._holders(st, name, here[name]))
        return created

    def _computed_deps(
        self, st: StatementInfo, name: str, by_access: dict[int, list[str]]
    ) -> dict[tuple[str, ...], tuple[str, ...]]:
        """Columns the statement computed for `name` (``df = df.assign(z=..)``), with the
        versions each was computed from."""
        out: dict[tuple[str, ...], tuple[str, ...]] = {}
        for a in st.accesses:
            if a.kind == "store" and a.literal and a.root == name and a.path:
                deps: dict[str, None] = {}
                for d in a.deps or ():
                    deps.update(dict.fromkeys(by_access.get(d, ())))
                out[(f"[{a.path[0][1]!r}]",)] = tuple(deps)
        return out

    def _holders(self, st: StatementInfo, name: str, paths: list[tuple[str, ...]]) -> list[str]:
        """ "part" versions of the values holding the parts just written, innermost first."""
        holders: dict[tuple[str, ...], list[str]] = {}
        for parts in paths:
            for k in range(len(parts) - 1, -1, -1):
                holders.setdefault(parts[:k], []).append(_symbol(name, parts[: k + 1]))
        out = [
            self.g._holder_version(name, hp, self.cell, st.index, holders[hp])
            for hp in sorted(holders, key=len, reverse=True)
        ]
        self.g._live.add(name)
        return out
