"""The commit gate: verify the draft, checkpoint what it created, commit it to the store."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.errors import IllegalActionError
from stateguard.finding import Finding
from stateguard.manager.drafts import Draft
from stateguard.manager.staleness import new_stale_marks
from stateguard.manager.verify import is_current, verify_state
from stateguard.manager.workspace import Workspace
from stateguard.state import AnalyticalState, Relation, StateStore


class Committed(BaseModel):
    """What a commit did."""

    model_config = ConfigDict(frozen=True)

    state: AnalyticalState
    checkpoint: str
    saved: list[str]
    """Names saved in the checkpoint."""
    unverified_steps: tuple[int, ...] = ()
    """Steps of the span whose lineage could not be verified."""


def checkpoint_id(state_id: str) -> str:
    """The checkpoint taken when state ``state_id`` is committed."""
    return f"ckpt-{state_id}"


def verify_draft(draft: Draft, workspace: Workspace) -> list[Finding]:
    """Checks run before any commit: stale inputs and executable constraints."""
    return verify_state(
        workspace.graph,
        draft.state.used_variables,
        draft.external_reads,
        draft.state.constraints,
        workspace.run_probe,
    )


def commit_draft(
    draft: Draft,
    span: Sequence[Step],
    workspace: Workspace,
    store: StateStore,
    relations: tuple[Relation, ...],
    *,
    event: str,
) -> Committed:
    """Commit ``draft`` over the steps of ``span``; `IllegalActionError` if a check fails.

    The committed state carries the marks of earlier states it finds stale
    (`stateguard.manager.staleness`)."""
    problems = verify_draft(draft, workspace)
    if problems:
        raise IllegalActionError("COMMIT_STATE", event, "; ".join(e.message for e in problems))
    graph = workspace.graph
    # the values holding what the state recorded (a column part is saved with its frame)
    names: dict[str, None] = {}
    for ref in draft.state.used_variables:
        if ref.version and is_current(graph, ref):
            names.setdefault(graph.version(ref.key).root or ref.name)
    ckpt = checkpoint_id(draft.state.id)
    saved = workspace.checkpoint(ckpt, list(names))
    unverified = tuple(s.step for s in span if s.cell is not None and s.cell.unverified is not None)
    marks = new_stale_marks(graph, store.committed())
    state = draft.state.with_changes(
        relations=relations, checkpoint_id=ckpt, unverified_steps=unverified, stale_marks=marks
    )
    store.save_draft(state)
    return Committed(
        state=store.commit(state.id), checkpoint=ckpt, saved=saved, unverified_steps=unverified
    )
