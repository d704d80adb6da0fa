"""What a policy is shown at an activation: a read-only context and a compact observation."""

from __future__ import annotations

from stateguard.finding import Finding
from stateguard.manager.drafts import Draft
from stateguard.manager.policies.base import Observation, PolicyContext, compact_step
from stateguard.manager.revisions import Revision
from stateguard.manager.spans import StepSpans
from stateguard.manager.workspace import Workspace
from stateguard.state import StateStore

OBSERVED_STEPS = 6
"""How many of the last pending steps an observation shows."""


def policy_context(
    workspace: Workspace,
    store: StateStore,
    spans: StepSpans,
    question: str,
    answer: str | None,
    draft: Draft | None,
    revisions: tuple[Revision, ...] = (),
    refused: dict[str, tuple[Finding, ...]] | None = None,
) -> PolicyContext:
    """A snapshot of everything a policy may read (no handle that can write)."""
    return PolicyContext(
        graph=workspace.graph,
        probe=workspace.run_probe,
        committed=tuple(store.committed()),
        load_state=store.get,
        steps=tuple(spans.steps),
        turn_steps=tuple(spans.reviewed),
        this_turn_steps=tuple(spans.this_turn),
        pending_steps=tuple(spans.pending),
        question=question,
        answer=answer,
        draft=draft.state if draft else None,
        revisions=revisions,
        refused=dict(refused or {}),
    )


def observation(
    event: str,
    store: StateStore,
    spans: StepSpans,
    turn: int,
    question: str,
    answer: str | None,
    draft: Draft | None,
    last_result: str | None,
) -> Observation:
    """The compact observation of one activation step."""
    pending = spans.pending
    return Observation(
        event=event,
        turn=turn,
        question=question,
        answer=answer if event == "review" else None,
        pending_interval=(pending[0].step, pending[-1].step) if pending else None,
        pending_steps=tuple(compact_step(s) for s in pending[-OBSERVED_STEPS:]),
        draft=draft.state if draft else None,
        draft_updated=bool(draft and draft.updated),
        relations_final=bool(draft and draft.relations_final),
        repair_attempts=draft.repairs if draft else 0,
        last_action_result=last_result,
        committed_index=tuple(e.model_dump() for e in store.index()),
    )
