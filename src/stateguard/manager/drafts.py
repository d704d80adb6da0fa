"""The open draft: its bookkeeping, and binding an UPDATE to versions from lineage."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from stateguard.checks import Step
from stateguard.lineage import LineageGraph
from stateguard.manager import actions as A
from stateguard.manager.binding import (
    bind_variables,
    proven_invalidations,
    span_record,
    span_versions,
)
from stateguard.state import AnalyticalState, Relation, StateStore, VariableRole
from stateguard.types import VarKey


class Draft(BaseModel):
    """Mutable bookkeeping of the open draft (the state itself is immutable)."""

    state: AnalyticalState
    updated: bool = False
    relations_final: bool = False
    repairs: int = 0
    step_start: int
    external_reads: tuple[str, ...] = ()
    """Versions the span read from before it (bound at UPDATE_STATE)."""


def new_draft(
    action: A.OpenState, store: StateStore, *, question: str, turn: int, step_start: int
) -> Draft:
    """A draft for OPEN_STATE covering the steps from ``step_start`` on, saved in ``store``."""
    state = AnalyticalState(
        id=store.next_state_id(),
        issue=action.issue or question or "(unnamed)",
        constraints=action.constraints,
        relations=normalize_relations(store, action.relations, None),
        turn=turn if turn >= 0 else None,
    )
    store.save_draft(state)
    return Draft(state=state, step_start=step_start)


def finalized_relations(draft: Draft, action: A.FinalizeRelations) -> Sequence[Relation]:
    """The relations FINALIZE_RELATIONS asks for: reselected, or kept when it names none."""
    if action.mode == "reselect":
        return action.relations
    return action.relations or draft.state.relations


def updated_state(
    draft: Draft, action: A.UpdateState, steps: Sequence[Step], graph: LineageGraph
) -> tuple[AnalyticalState, tuple[str, ...]]:
    """The draft's state after ``action``, and the versions its span read from before it.

    The state records what the span read and produced, as lineage saw it
    (`stateguard.manager.binding.span_record`). A policy that names variables narrows
    that to the ones named (a name the span never touched is bound to its current
    version, as read).
    """
    span = (
        list(steps[draft.step_start :])
        if action.source_interval is None
        else [s for s in steps if action.source_interval[0] <= s.step <= action.source_interval[1]]
    )
    external, _ = span_versions(span)
    reads, produced = span_record(span, graph)
    roles: dict[str, VariableRole] = {k: "read" for k in reads}
    roles.update({k: "produced" for k in produced})
    requested_keys = [v for v in action.used_variables if VarKey.is_key(v)]
    requested_names = [v for v in action.used_variables if not VarKey.is_key(v)]
    if action.used_variables:
        span_keys = {VarKey.name_of(k): k for k in [*reads, *produced]}
        keys = [k for k in requested_keys if k in roles]
        keys += [span_keys[n] for n in requested_names if n in span_keys]
        names = [n for n in requested_names if n not in span_keys]
    else:
        keys, names = [*reads, *produced], []
    used = bind_variables(graph, keys, names, roles, default_role="read")
    interval = (span[0].step, span[-1].step) if span else (None, None)
    state = draft.state.with_changes(
        issue=action.issue or draft.state.issue,
        used_variables=used,
        conclusions=action.conclusions or draft.state.conclusions,
        source_step_start=interval[0],
        source_step_end=interval[1],
    )
    return state, tuple(external)


def normalize_relations(
    store: StateStore,
    rels: Sequence[Relation],
    draft: Draft | None,
    graph: LineageGraph | None = None,
) -> tuple[Relation, ...]:
    """Keep relations to committed states only, dedupe, add proven invalidations.

    With lineage (``graph``) and a draft whose versions carry roles, an invalidation is
    proven by a produced version superseding one an earlier state read or produced, and an
    ``invalidate`` no version proves is dropped; otherwise the store's name rule proves it.
    """
    committed_states = store.committed()
    committed = {s.id for s in committed_states}
    out: dict[tuple[str, str | None], Relation] = {}
    for r in rels:
        if r.type == "init" or r.related_state_id in committed:
            out[(r.type, r.related_state_id)] = r
    if draft is not None and draft.updated:
        state = draft.state.with_changes(relations=())
        if graph is not None and state.records_roles:
            proven = proven_invalidations(state.used_variables, committed_states, graph)
            out = {k: v for k, v in out.items() if v.type != "invalidate" or k[1] in proven}
        else:
            proven = store.invalidated_by(state)
        for sid in proven:
            if sid in committed:
                out[("invalidate", sid)] = Relation(type="invalidate", related_state_id=sid)
    non_init = {k: v for k, v in out.items() if v.type != "init"}
    return tuple(non_init.values()) or (Relation(type="init"),)


def revise_draft(
    draft: Draft,
    action: A.UpdateState | A.FinalizeRelations,
    store: StateStore,
    steps: Sequence[Step],
    graph: LineageGraph,
) -> str:
    """Apply UPDATE_STATE or FINALIZE_RELATIONS to ``draft`` and save it; the result line."""
    if isinstance(action, A.UpdateState):
        draft.state, draft.external_reads = updated_state(draft, action, steps, graph)
        store.save_draft(draft.state)
        draft.updated = True
        n = len(draft.state.used_variables)
        return f"updated {draft.state.id}: {n} variables bound from lineage"
    rels = normalize_relations(store, finalized_relations(draft, action), draft, graph)
    draft.state = draft.state.with_changes(relations=rels)
    store.save_draft(draft.state)
    draft.relations_final = True
    return "relations: " + ", ".join(r.summary for r in rels)
