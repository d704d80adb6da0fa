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

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

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
    """"bind" (rebinding) or "mutate" (same object changed in place)."""
    parents: tuple[str, ...] = ()
    summary: str = ""
    keys: tuple[str, ...] | None = None
    shared_with: tuple[str, ...] = ()
    """Names sharing this object whose versions the same cell created (aliases, views)."""
    """For in-place changes: the constant keys/attributes stored (``['cost']``),
    None when unknown (``.loc[mask, ..]``, a method call, a called function)."""

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
        path = " -> ".join(self.chain)
        return (
            f"{self.version} is stale: it was derived from {self.outdated} ({path}), "
            f"which cell {self.superseding_cell} superseded with {self.superseded_by}"
            + (f" (now {self.current})" if self.current != self.superseded_by else "")
        )


class ReadRecord(_Frozen):
    """A read of one version by one statement of a cell."""

    name: str
    version: str
    statement: int
    stale: StaleReason | None = None
    refresh: bool = False
    """The statement re-derived this same variable into a fresh version: a stale read
    that served only to recompute it (the manager does not treat it as a stale use)."""


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


class LineageGraph:
    """Versions, derivation and staleness for one session.

    Responsibilities: assign versions from cell reports; answer derivation and
    staleness queries; remember which cells read stale versions.
    """

    def __init__(self) -> None:
        self._versions: dict[str, VariableVersion] = {}
        self._by_name: dict[str, list[str]] = {}
        self._ancestors: dict[str, frozenset[str]] = {}
        self._live: set[str] = set()
        self._superseded: set[str] = set()
        self._cells: list[CellRecord] = []

    # -- queries ------------------------------------------------------------

    @property
    def cells(self) -> tuple[CellRecord, ...]:
        """Every recorded cell, in execution order."""
        return tuple(self._cells)

    def versions(self, name: str) -> tuple[VariableVersion, ...]:
        """All versions of `name`, oldest first."""
        return tuple(self._versions[k] for k in self._by_name.get(name, ()))

    def version(self, key: str) -> VariableVersion:
        """The version with key ``name@vN``; KeyError if unknown."""
        return self._versions[key]

    def latest(self, name: str) -> VariableVersion | None:
        """The current version of `name` (even if the name was since deleted)."""
        keys = self._by_name.get(name)
        return self._versions[keys[-1]] if keys else None

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
        # fast path: the parents of key and of its ancestors are exactly its ancestors;
        # an outdated edge needs a superseded parent
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
        """Current versions of live names that are stale, with reasons."""
        out: dict[str, StaleReason] = {}
        for name in sorted(self._live):
            v = self.latest(name)
            if v is not None and (r := self.why_stale(v.key)) is not None:
                out[v.key] = r
        return out

    def cells_with_stale_reads(self) -> tuple[CellRecord, ...]:
        """Cells that read at least one version that was stale at the time."""
        return tuple(c for c in self._cells if c.read_stale)

    def _order(self, key: str) -> tuple[int, int]:
        v = self._versions[key]
        return (v.cell, v.statement if v.statement is not None else -1)

    def _outdated_edge(self, p: str, q: str, target: str) -> StaleReason | None:
        pv = self._versions[p]
        keys = self._by_name[pv.name]
        current = keys[-1]
        if current == p or q == current or q in self._ancestors[current]:
            return None
        if self._refreshed(q, current, target):
            return None
        nxt = keys[keys.index(p) + 1]
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
            node = next(
                p for p in self._versions[node].parents if p == start or start in self._ancestors[p]
            )
            path.append(node)
        return tuple(reversed(path))

    # -- updates ------------------------------------------------------------

    def record_deleted(self, names: list[str] | tuple[str, ...]) -> None:
        """Names were removed from the namespace outside any tracked cell."""
        self._live.difference_update(names)

    def record_restart(self) -> None:
        """The kernel restarted: nothing is live any more (history is kept)."""
        self._live.clear()

    def record_cell(self, report: CellReport) -> CellRecord:
        """Apply one cell's report; returns what the cell read and created."""
        cell = len(self._cells)
        analysis = report.analysis
        if analysis.syntax_error is not None:
            rec = CellRecord(cell=cell, source=report.source, syntax_error=analysis.syntax_error)
            self._cells.append(rec)
            return rec
        stmts = analysis.statements[: report.executed_statements]
        index = CellIndex(report, stmts)
        placement = index.place_changes()
        writes_at: dict[int, list[str]] = {}
        for name, idx in placement.items():
            writes_at.setdefault(idx, []).append(name)

        pending: dict[str, _Provisional] = {}
        reads: list[ReadRecord] = []
        created: list[str] = []
        extra_reads_of = index.mutation_reads()
        for st in stmts:
            resolved: dict[str, None] = {}
            first_read = len(reads)  # this statement's reads are reads[first_read:]
            for name in index.reads[st.index]:
                if name in pending:
                    resolved.update(dict.fromkeys(pending[name].parents))
                    continue
                cur = self.latest(name)
                if cur is None or name not in self._live:
                    continue
                resolved.setdefault(cur.key)
                reads.append(
                    ReadRecord(
                        name=name,
                        version=cur.key,
                        statement=st.index,
                        stale=self.why_stale(cur.key),
                    )
                )
            parents = tuple(resolved)
            # provisional in-cell bindings that are not the surviving version
            for name in (*st.writes, *st.mutates, *st.inplace_calls):
                if placement.get(name, -1) > st.index and name in pending:
                    # filled in place before its surviving version: accumulate inputs
                    pending[name] = _Provisional((*pending[name].parents, *parents))
                elif (
                    placement.get(name) != st.index
                    and name in st.writes
                    and (name not in report.unchanged)
                ):
                    pending[name] = _Provisional(parents)
            for name in writes_at.get(st.index, ()):
                pending.pop(name, None)
                created.append(
                    self._new_version(
                        name, cell, st.index, index, parents, extra_reads_of.get(name, ())
                    )
                )
            # a statement that reads a stale version to re-derive that same variable (the
            # recompute after a revision) still read it, but only to refresh it
            for i in range(first_read, len(reads)):
                r = reads[i]
                if r.stale is not None and r.name in writes_at.get(st.index, ()):
                    new = self.latest(r.name)
                    if new is not None and self.why_stale(new.key) is None:
                        reads[i] = r.model_copy(update={"refresh": True})
        for name in report.deleted:
            self._live.discard(name)
        rec = CellRecord(
            cell=cell,
            source=report.source,
            reads=tuple(reads),
            created=tuple(created),
            unchanged=report.unchanged,
            deleted=report.deleted,
            failed_statement=report.failed_statement,
        )
        self._cells.append(rec)
        return rec

    def _new_version(
        self,
        name: str,
        cell: int,
        statement: int,
        index: CellIndex,
        parents: tuple[str, ...],
        extra_reads: tuple[str, ...],
    ) -> str:
        report = index.report
        mutated = name in report.mutated and name not in report.rebound
        prev = self.latest(name)
        same_object = {
            a for a in report.aliases.get(name, ()) if a in report.mutated or a in report.rebound
        }
        all_parents: dict[str, None] = {
            p: None for p in parents if self._versions[p].name not in same_object
        }
        if mutated:
            for n in extra_reads:
                cur = self.latest(n)
                if n in same_object:
                    continue
                if cur is not None and n in self._live and cur.key not in all_parents:
                    all_parents.setdefault(cur.key)
            if prev is not None and name in self._live:
                all_parents.setdefault(prev.key)
        version = VariableVersion(
            name=name,
            version=len(self._by_name.get(name, ())) + 1,
            cell=cell,
            statement=statement,
            kind="mutate" if mutated else "bind",
            parents=tuple(all_parents),
            summary=(report.mutated if mutated else report.rebound).get(name, ""),
            keys=index.mutation_keys(name) if mutated else None,
            shared_with=tuple(sorted(same_object)),
        )
        key = version.key
        anc: set[str] = set(version.parents)
        for p in version.parents:
            anc |= self._ancestors[p]
        self._versions[key] = version
        self._ancestors[key] = frozenset(anc)
        if prev is not None:
            self._superseded.add(prev.key)
        self._by_name.setdefault(name, []).append(key)
        self._live.add(name)
        return key
