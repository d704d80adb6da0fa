"""Worker-facing hints with fixed, reference-only wording (templates in prompts/).

A hint names states, variables, versions and evidence; it never contains a
solution, replacement code or an answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from stateguard.manager.evidence import Evidence
from stateguard.manager.prompts import fill
from stateguard.manager.protocol import Hint

RepairMode = Literal["light", "heavy", "rollback"]


def state_hint(packed_states: str, state_ids: Sequence[str]) -> Hint:
    """Reference-only notes about committed states."""
    return Hint(
        kind="state",
        text=fill("state_hint.md", states=packed_states.strip()).strip(),
        state_ids=tuple(state_ids),
    )


def repair_hint(
    evidence: Sequence[Evidence],
    reasoning: str,
    mode: RepairMode,
    *,
    state_id: str | None,
    removed: Sequence[str] = (),
    restored: Sequence[str] = (),
    checkpoint: str | None = None,
) -> Hint:
    """A repair hint: suspected variables and the faulty reasoning, with its evidence."""
    suspects = sorted({v for e in evidence for v in e.variables})
    if mode == "heavy" and removed:
        action = (
            "To force a fresh derivation, these variables were removed from the namespace: "
            + ", ".join(removed)
            + "."
        )
    elif mode == "rollback":
        action = (
            "This was the last repair attempt for this state: its draft was abandoned"
            + (
                f" and {', '.join(restored)} restored from checkpoint {checkpoint}"
                if restored and checkpoint
                else ""
            )
            + ". Continue from verified values only."
        )
    else:
        action = ""
    text = fill(
        "repair_hint.md",
        evidence="\n".join(f"- {e.message}" for e in evidence) or "- (none)",
        suspects=", ".join(suspects) if suspects else "the values reported in this turn",
        reasoning=reasoning,
        action=action,
    )
    return Hint(
        kind="repair",
        text=text.strip(),
        state_ids=(state_id,) if state_id else (),
        variables=tuple(suspects),
        evidence=tuple(s for e in evidence for s in e.superseding)
        or tuple(e.message for e in evidence),
    )
