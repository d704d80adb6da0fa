"""Deterministic bookkeeping from lineage: which versions a span of steps used
and produced, and which relations that implies to committed states."""

from __future__ import annotations

from collections.abc import Sequence

from stateguard.lineage import LineageGraph
from stateguard.manager.protocol import StepView
from stateguard.state import AnalyticalState, Relation, VariableRef
from stateguard.types import VarKey


def span_versions(steps: Sequence[StepView]) -> tuple[list[str], list[str]]:
    """(versions read from before the span, versions created in it — last per name)."""
    created: dict[str, str] = {}
    created_keys: set[str] = set()
    external: dict[str, None] = {}
    for s in steps:
        if s.cell is None:
            continue
        for r in s.cell.reads:
            if r.version not in created_keys:
                external.setdefault(r.version)
        for key in s.cell.created:
            created[VarKey.name_of(key)] = key
            created_keys.add(key)
    return list(external), list(created.values())


def bind_variables(
    graph: LineageGraph, keys: Sequence[str], names: Sequence[str] = ()
) -> tuple[VariableRef, ...]:
    """VariableRefs for version keys and for bare names (bound to their current version).

    A policy cannot invent a version: unknown names or keys are dropped.
    """
    out: dict[str, VariableRef] = {}
    for item in [*keys, *names]:
        if VarKey.is_key(item):
            name, _, ver = item.partition("@v")
            try:
                v = graph.version(item)
            except KeyError:
                continue
        else:
            v = graph.latest(item)
            if v is None:
                continue
            name, ver = v.name, str(v.version)
        out[v.key] = VariableRef(name=name, version=int(ver), value_summary=v.summary)
    return tuple(out.values())


def infer_relations(
    used: Sequence[VariableRef],
    external_reads: Sequence[str],
    committed: Sequence[AnalyticalState],
) -> tuple[Relation, ...]:
    """Relations of a new state to committed ones, from the versions it shares with them.

    invalidate: the new state rewrites a variable an earlier state used (newer version).
    combine: it reads versions used by >= 2 earlier states; progress: by exactly the
    immediately previous state; branch: by exactly one non-adjacent state; else init.
    """
    if not committed:
        return (Relation(type="init"),)
    newest = {}
    for ref in used:
        newest[ref.name] = max(newest.get(ref.name, 0), ref.version)
    reads = set(external_reads)
    invalidated: list[str] = []
    sources: list[str] = []
    for st in committed:
        if any(newest.get(v.name, 0) > v.version for v in st.used_variables):
            invalidated.append(st.id)
        if reads & {v.key for v in st.used_variables}:
            sources.append(st.id)
    rels = [Relation(type="invalidate", related_state_id=s) for s in invalidated]
    sources = [s for s in sources if s not in invalidated]
    if len(sources) >= 2:
        rels += [Relation(type="combine", related_state_id=s) for s in sources]
    elif len(sources) == 1:
        kind = "progress" if sources[0] == committed[-1].id else "branch"
        rels.append(Relation(type=kind, related_state_id=sources[0]))
    return tuple(rels) or (Relation(type="init"),)
