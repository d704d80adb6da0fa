"""Lifecycle phases and the legality table: which control action each phase allows."""

from __future__ import annotations

from typing import Literal

from stateguard.errors import IllegalActionError
from stateguard.manager.drafts import Draft

Phase = Literal["idle", "turn_start", "working", "review", "segment"]

ALLOWED: dict[str, frozenset[str]] = {
    "turn_start": frozenset({"OPEN_STATE", "ABSTAIN", "RESUME_WORKER"}),
    "review": frozenset(
        {
            "UPDATE_STATE",
            "FINALIZE_RELATIONS",
            "COMMIT_STATE",
            "REPAIR",
            "ABANDON_STATE",
            "ABSTAIN",
            "RESUME_WORKER",
            "OPEN_STATE",
        }
    ),
    "segment": frozenset(
        {
            "OPEN_STATE",
            "UPDATE_STATE",
            "FINALIZE_RELATIONS",
            "COMMIT_STATE",
            "REPAIR",
            "ABANDON_STATE",
            "ABSTAIN",
            "RESUME_WORKER",
        }
    ),
}
NEEDS_DRAFT = frozenset(
    {"UPDATE_STATE", "FINALIZE_RELATIONS", "COMMIT_STATE", "REPAIR", "ABANDON_STATE"}
)
CHAINING = frozenset({"OPEN_STATE", "UPDATE_STATE", "FINALIZE_RELATIONS"})
"""Control actions after which the same review point activates the policy again."""


def phase_of(event: str) -> str:
    """The phase an activation event runs in."""
    return "review" if event == "review" else event


def check_legal(kind: str, event: str, draft: Draft | None, max_repairs: int) -> None:
    """Raise `IllegalActionError` unless ``kind`` is allowed now, with this draft."""
    phase = phase_of(event)
    if kind not in ALLOWED.get(phase, frozenset()):
        raise IllegalActionError(kind, phase, "not allowed at this point of the lifecycle")
    if kind in NEEDS_DRAFT and draft is None:
        raise IllegalActionError(kind, phase, "there is no open draft state")
    if kind == "OPEN_STATE" and draft is not None:
        raise IllegalActionError(kind, phase, f"draft {draft.state.id} is already open")
    if kind == "COMMIT_STATE":
        assert draft is not None
        if not draft.updated:
            raise IllegalActionError(kind, phase, "the draft was never updated (UPDATE_STATE)")
        if not draft.relations_final:
            raise IllegalActionError(kind, phase, "relations are not finalized")
    if kind == "REPAIR":
        assert draft is not None
        if draft.repairs >= max_repairs:
            raise IllegalActionError(kind, phase, "the repair budget of this state is spent")
