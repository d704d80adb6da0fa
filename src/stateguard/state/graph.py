"""Pure graph algorithms over committed analytical states (no storage).

Edge convention: an edge ``X → Y`` means state ``X`` holds a relation whose
target is ``Y`` (``Y`` is older). Hence ``upstream(X)`` = nodes reachable from
``X`` and ``downstream(Y)`` = nodes that reach ``Y``. The store only commits a
state whose targets are already committed, so edges always point to earlier
commits and the graph is a DAG.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

from stateguard.state.models import AnalyticalState, StaleMark

PROPAGATING_RELATIONS: frozenset[str] = frozenset({"progress", "branch", "combine"})
"""Relation types through which staleness flows downstream (never ``invalidate``)."""


def build_graph(
    states: Sequence[AnalyticalState], relation_types: Iterable[str] | None = None
) -> nx.DiGraph:
    """Build the relation DiGraph of ``states`` (commit order kept as node attr ``order``).

    Only relations whose target is among ``states`` become edges; if
    ``relation_types`` is given, only relations of those types. Each edge
    carries the sorted tuple of relation ``types`` linking the pair.
    """
    allowed = None if relation_types is None else frozenset(relation_types)
    graph = nx.DiGraph()
    for order, state in enumerate(states):
        graph.add_node(state.id, order=order)
    for state in states:
        for relation in state.relations:
            target = relation.related_state_id
            if target is None or target not in graph:
                continue
            if allowed is not None and relation.type not in allowed:
                continue
            if graph.has_edge(state.id, target):
                types = set(graph.edges[state.id, target]["types"]) | {relation.type}
                graph.edges[state.id, target]["types"] = tuple(sorted(types))
            else:
                graph.add_edge(state.id, target, types=(relation.type,))
    return graph


def _ordered(graph: nx.DiGraph, ids: Iterable[str]) -> list[str]:
    """Sort ``ids`` by node ``order`` (commit order)."""
    return sorted(set(ids), key=lambda node: graph.nodes[node]["order"])


def related(graph: nx.DiGraph, state_id: str) -> list[str]:
    """Ids linked to ``state_id`` by a direct relation in either direction."""
    neighbours = set(graph.successors(state_id)) | set(graph.predecessors(state_id))
    return _ordered(graph, neighbours)


def upstream(graph: nx.DiGraph, state_id: str) -> list[str]:
    """Transitive ancestors: every state ``state_id`` builds on, in commit order."""
    return _ordered(graph, nx.descendants(graph, state_id))


def downstream(graph: nx.DiGraph, state_id: str) -> list[str]:
    """Transitive descendants: every state building on ``state_id``, in commit order."""
    return _ordered(graph, nx.ancestors(graph, state_id))


def supersedes(new_state: AnalyticalState, old_state: AnalyticalState) -> bool:
    """Whether ``new_state`` directly invalidates ``old_state``.

    True if ``new_state`` names ``old_state`` with an ``invalidate`` relation,
    or uses a variable name at a higher version than ``old_state`` used it.
    """
    if any(
        r.type == "invalidate" and r.related_state_id == old_state.id for r in new_state.relations
    ):
        return True
    newest: dict[str, int] = {}
    for ref in new_state.used_variables:
        newest[ref.name] = max(ref.version, newest.get(ref.name, ref.version))
    return any(
        ref.name in newest and ref.version < newest[ref.name] for ref in old_state.used_variables
    )


def propagation_graph(states: Sequence[AnalyticalState]) -> nx.DiGraph:
    """Edges ``D → T`` through which staleness of ``T`` flows to ``D``.

    Kept: relations of a ``PROPAGATING_RELATIONS`` type, except when ``D``
    supersedes ``T`` — a state that replaced ``T``'s result (e.g. progressed
    from ``T`` while recomputing a variable at a newer version) does not
    become stale together with ``T``.
    """
    graph = build_graph(states, PROPAGATING_RELATIONS)
    by_id = {s.id: s for s in states}
    cut = [(d, t) for d, t in graph.edges if supersedes(by_id[d], by_id[t])]
    graph.remove_edges_from(cut)
    return graph


def invalidated_by(committed: Sequence[AnalyticalState], new_state: AnalyticalState) -> list[str]:
    """Committed states that ``new_state`` invalidates, in commit order.

    Candidates are the committed states other than ``new_state``; when
    ``new_state`` is itself committed, only those committed *before* it. A
    candidate is invalidated directly if ``new_state`` supersedes it (names it
    with an ``invalidate`` relation, or used a variable name at a version lower
    than a version of that name in ``new_state.used_variables``); candidates
    downstream of a directly invalidated one are invalidated too, following
    ``propagation_graph``.
    """
    ids = [s.id for s in committed]
    if new_state.id in ids:
        candidates = list(committed[: ids.index(new_state.id)])
    else:
        candidates = [s for s in committed if s.id != new_state.id]
    graph = propagation_graph(candidates)
    result: set[str] = set()
    for state in candidates:
        if supersedes(new_state, state):
            result.add(state.id)
            result |= nx.ancestors(graph, state.id)
    return _ordered(graph, result)


def stale_marks(committed: Sequence[AnalyticalState]) -> dict[str, tuple[StaleMark, ...]]:
    """Each committed state some later committed state marked stale, with those marks.

    Keys follow commit order; marks follow the commit order of the states holding them.
    Marks naming a state that is not an earlier committed state are ignored.
    """
    order = {s.id: i for i, s in enumerate(committed)}
    found: dict[str, dict[StaleMark, None]] = {}
    for state in committed:
        for mark in state.stale_marks:
            if order.get(mark.state_id, len(order)) < order[state.id]:
                found.setdefault(mark.state_id, {})[mark] = None
    return {k: tuple(found[k]) for k in sorted(found, key=order.__getitem__)}


def invalidation_map(committed: Sequence[AnalyticalState]) -> dict[str, tuple[str, ...]]:
    """Map each stale committed state to the later committed states invalidating it.

    States recorded with lineage roles (`AnalyticalState.records_roles`) are stale exactly
    when a later state's commit marked them (`stale_marks`; the value lists the marking
    states). States recorded without roles follow the name rule of `invalidated_by`. Both
    keys and values follow commit order.
    """
    order = {s.id: i for i, s in enumerate(committed)}
    invalidators: dict[str, list[str]] = {}
    if any(s.records_roles for s in committed):
        for state in committed:
            for target in dict.fromkeys(m.state_id for m in state.stale_marks):
                if order.get(target, len(order)) < order[state.id]:
                    invalidators.setdefault(target, []).append(state.id)
    else:
        for state in committed:
            for victim in invalidated_by(committed, state):
                invalidators.setdefault(victim, []).append(state.id)
    return {k: tuple(invalidators[k]) for k in sorted(invalidators, key=order.__getitem__)}
