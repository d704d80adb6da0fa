"""Carrying out one repair: its mode from the schedule, its effects on the workspace, and
the typed notice for the worker (no wording: `stateguard.hints` renders it)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.manager import actions as A
from stateguard.manager import events as E
from stateguard.manager.notes import RepairMode
from stateguard.manager.notices import repair_hint
from stateguard.manager.protocol import Hint
from stateguard.manager.repairs import repair_mode, rollback_names, suspect_names
from stateguard.manager.workspace import Workspace


class RepairDone(BaseModel):
    """What repair ``attempt`` of a state did."""

    model_config = ConfigDict(frozen=True)

    attempt: int
    mode: RepairMode
    removed: list[str] = []
    """Names deleted from the worker's namespace (heavy repair)."""
    restored: list[str] = []
    """Names restored from the last checkpoint (rollback)."""
    hint: Hint

    def events(self, state_id: str, checkpoint: str | None) -> list[E.Payload]:
        """What the repair logs: the repair, and the rollback when there was one."""
        notice = self.hint.notice.model_dump(mode="json") if self.hint.notice else None
        out: list[E.Payload] = [
            E.RepairLogged(
                state=state_id,
                attempt=self.attempt,
                mode=self.mode,
                removed=self.removed,
                restored=self.restored,
                notice=notice,
            )
        ]
        if self.mode == "rollback":
            out.append(E.Rollback(state=state_id, checkpoint=checkpoint, restored=self.restored))
        return out


def repair_evidence(action: A.Repair) -> list[Finding]:
    """The action's evidence; the policy's free-text evidence when it gave none (a doubt:
    an LLM policy's own account of the answer, which nothing checked)."""
    return list(action.evidence) or [
        Finding(
            check="policy",
            severity="doubt",
            message=m,
            basis=("answer",),
            variables=tuple(action.suspected_variables),
        )
        for m in action.analytical_evidence
    ]


def carry_out_repair(
    action: A.Repair,
    *,
    attempt: int,
    max_repairs: int,
    state_id: str,
    draft_steps: Sequence[Step],
    workspace: Workspace,
    last_checkpoint: str | None,
) -> RepairDone:
    """Apply repair ``attempt`` (1-based) of ``state_id``: light, heavy, then rollback."""
    mode = repair_mode(attempt, max_repairs)
    removed: list[str] = []
    restored: list[str] = []
    suspects = suspect_names(action.suspected_variables)
    if mode == "heavy" and suspects:
        removed = workspace.delete_variables(suspects)
    if mode == "rollback" and last_checkpoint is not None:
        restored = workspace.restore(last_checkpoint, rollback_names(draft_steps))
    hint = repair_hint(
        repair_evidence(action),
        action.error_hint,
        mode,
        checks=action.checks,
        state_id=state_id,
        removed=removed,
        restored=restored,
        checkpoint=last_checkpoint,
    )
    return RepairDone(attempt=attempt, mode=mode, removed=removed, restored=restored, hint=hint)
