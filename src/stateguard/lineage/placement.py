"""Where in a cell each changed name gets its new version, and from which reads.

`CellIndex` indexes one cell's executed statements once (who reads, rebinds,
mutates or references which name), so placement stays linear in the cell size.
Pure data over a `CellReport`; used by the lineage graph.
"""

from __future__ import annotations

from collections.abc import Sequence

from stateguard.lineage.facts import StatementInfo
from stateguard.lineage.report import CellReport


def statement_reads(st: StatementInfo, report: CellReport) -> tuple[str, ...]:
    """Names a statement reads, including globals read by functions it uses."""
    names: dict[str, None] = dict.fromkeys(st.reads)
    globs = report.function_globals
    if globs:
        for n in (*st.reads, *st.calls):
            for g in globs.get(n, ()):
                names.setdefault(g)
    return tuple(names)


class CellIndex:
    """Per-name statement indexes of one cell's executed statements."""

    def __init__(self, report: CellReport, stmts: Sequence[StatementInfo]) -> None:
        self.report = report
        self.stmts = stmts
        self.reads = {st.index: statement_reads(st, report) for st in stmts}
        self.strong: dict[str, list[int]] = {}  # x[..] = .., x.m(inplace=True), x.append
        self.refs: dict[str, list[int]] = {}  # any mention, as a receiver or a read
        self.inplace: set[str] = set()
        self.keys: dict[str, list[str | None]] = {}
        refs = self.refs
        for st in stmts:
            reads = self.reads[st.index]
            if not (st.mutates or st.inplace_calls or st.method_receivers or st.store_keys):
                for n in reads:  # the common statement: it only reads (names are unique)
                    refs.setdefault(n, []).append(st.index)
                continue
            for n in dict.fromkeys((*st.mutates, *st.inplace_calls)):
                self.strong.setdefault(n, []).append(st.index)
            for n in dict.fromkeys((*st.mutates, *st.inplace_calls, *st.method_receivers, *reads)):
                refs.setdefault(n, []).append(st.index)
            self.inplace.update(st.inplace_calls)
            for root, key in st.store_keys:
                self.keys.setdefault(root, []).append(key)

    def group(self, name: str) -> tuple[str, ...]:
        """The name and the names sharing its object."""
        return (name, *self.report.aliases.get(name, ()))

    def first(self, table: dict[str, list[int]], name: str) -> int | None:
        """First statement of `table` mentioning the name or an alias."""
        found = [table[n][0] for n in self.group(name) if n in table]
        return min(found) if found else None

    def place_changes(self) -> dict[str, int]:
        """Statement index at which each changed name gets its new version."""
        stmts, report = self.stmts, self.report
        if not stmts:
            return {}
        last = stmts[-1].index
        placement: dict[str, int] = {}
        last_writer: dict[str, int] = {}
        self.filled_by_parts: set[str] = set()
        """Names bound, then filled only through constant-path stores later in the cell:
        their version sits at the bind, and each store versions its part."""
        for st in stmts:
            for n in st.writes:
                last_writer[n] = st.index
                self.filled_by_parts.discard(n)
            for n in st.method_receivers:
                if n in last_writer and n in report.user_objects and n not in st.writes:
                    # foo = Foo(); foo.reset(): built, then changed by its own methods
                    last_writer[n] = st.index
                    self.filled_by_parts.discard(n)
            for n in dict.fromkeys((*st.mutates, *st.inplace_calls)):
                if n in last_writer and n not in st.writes and self.clean_store(st, n):
                    self.filled_by_parts.add(n)
                elif n in last_writer:  # built, then filled in place later in the cell
                    last_writer[n] = st.index
                    self.filled_by_parts.discard(n)
        for name in report.rebound:
            if name in last_writer:
                placement[name] = last_writer[name]
                continue
            callers = [
                st.index
                for st in stmts
                if st.star_import
                or any(name in report.function_globals.get(c, ()) for c in st.calls)
            ]
            placement[name] = callers[-1] if callers else last
        first_call = next((st.index for st in stmts if st.calls), last)
        for name in report.reframed:
            if name in last_writer:
                placement[name] = last_writer[name]  # rebound there, to a reframed frame
        for name in report.mutated:
            if name in placement:
                continue
            # in place: at the first statement that could have done it
            strong = self.first(self.strong, name)
            ref = self.first(self.refs, name)
            placement[name] = (
                strong if strong is not None else (ref if ref is not None else first_call)
            )
        return placement

    def clean_store(self, st: StatementInfo, name: str) -> bool:
        """Whether `st` changes `name` only by stores at constant paths that reached parts."""
        if name in st.inplace_calls or any(root == name for _, root in st.call_args):
            return False
        stores = [(i, a) for i, a in enumerate(st.accesses) if a.root == name and a.kind in (
            "store", "delete") and not a.literal]  # fmt: skip
        return bool(stores) and all(
            a.exact and a.path and self.report.paths.get(f"{st.index}:{i}") for i, a in stores
        )

    def mutation_reads(self) -> dict[str, tuple[str, ...]]:
        """For mutated names: reads of every statement that syntactically changes them."""
        out: dict[str, tuple[str, ...]] = {}
        for name in self.report.mutated:
            names: dict[str, None] = {}
            for n in self.group(name):
                for idx in self.strong.get(n, ()):
                    names.update(dict.fromkeys(self.reads[idx]))
            names.pop(name, None)
            out[name] = tuple(names)
        return out

    def mutation_keys(self, name: str) -> tuple[str, ...] | None:
        """Constant keys the cell stored into `name` in place, or None if unknown."""
        group = self.group(name)
        if any(n in self.inplace for n in group):
            return None
        keys: dict[str, None] = {}
        for n in group:
            for key in self.keys.get(n, ()):
                if key is None:
                    return None
                keys.setdefault(key)
        return tuple(keys) or None
