"""Where in a cell each changed name gets its new version, and from which reads.

Pure functions over a `CellReport`; used by the lineage graph.
"""

from __future__ import annotations

from collections.abc import Sequence

from stateguard.lineage.facts import StatementInfo
from stateguard.lineage.report import CellReport


def statement_reads(st: StatementInfo, report: CellReport) -> tuple[str, ...]:
    """Names a statement reads, including globals read by functions it uses."""
    names: dict[str, None] = dict.fromkeys(st.reads)
    for n in (*st.reads, *st.calls):
        for g in report.function_globals.get(n, ()):
            names.setdefault(g)
    return tuple(names)


def _references(st: StatementInfo, name: str, report: CellReport) -> bool:
    group = (name, *report.aliases.get(name, ()))
    if any(n in st.mutates or n in st.inplace_calls or n in st.method_receivers for n in group):
        return True
    used = statement_reads(st, report)
    return any(n in used for n in group)


def place_changes(report: CellReport, stmts: Sequence[StatementInfo]) -> dict[str, int]:
    """Statement index at which each changed name gets its new version."""
    if not stmts:
        return {}
    last = stmts[-1].index
    placement: dict[str, int] = {}
    last_writer: dict[str, int] = {}
    for st in stmts:
        for n in st.writes:
            last_writer[n] = st.index
        for n in (*st.mutates, *st.inplace_calls):
            if n in last_writer:  # built, then filled in place later in the cell
                last_writer[n] = st.index
    for name in report.rebound:
        if name in last_writer:
            placement[name] = last_writer[name]
            continue
        callers = [
            st.index
            for st in stmts
            if st.star_import or any(name in report.function_globals.get(c, ()) for c in st.calls)
        ]
        placement[name] = callers[-1] if callers else last
    for name in report.mutated:
        if name in placement:
            continue
        strong = [
            st.index
            for st in stmts
            if any(
                n in st.mutates or n in st.inplace_calls
                for n in (name, *report.aliases.get(name, ()))
            )
        ]
        if strong:
            placement[name] = strong[0]
            continue
        refs = [st.index for st in stmts if _references(st, name, report)]
        if refs:
            placement[name] = refs[0]
            continue
        callers = [st.index for st in stmts if st.calls]
        placement[name] = callers[0] if callers else last
    return placement


def mutation_reads(
    report: CellReport, stmts: Sequence[StatementInfo]
) -> dict[str, tuple[str, ...]]:
    """For mutated names: reads of every statement that syntactically changes them."""
    out: dict[str, tuple[str, ...]] = {}
    for name in report.mutated:
        group = (name, *report.aliases.get(name, ()))
        names: dict[str, None] = {}
        for st in stmts:
            if any(n in st.mutates or n in st.inplace_calls for n in group):
                names.update(dict.fromkeys(statement_reads(st, report)))
        names.pop(name, None)
        out[name] = tuple(names)
    return out


def mutation_keys(report: CellReport, name: str) -> tuple[str, ...] | None:
    """Constant keys the cell stored into `name` in place, or None if unknown."""
    keys: dict[str, None] = {}
    group = (name, *report.aliases.get(name, ()))
    stmts = report.analysis.statements[: report.executed_statements]
    for st in stmts:
        if any(n in st.inplace_calls for n in group):
            return None
        for root, key in st.store_keys:
            if root in group:
                if key is None:
                    return None
                keys.setdefault(key)
    return tuple(keys) or None
