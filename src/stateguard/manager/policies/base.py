"""What a policy sees and must implement."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.kernel import ProbeResult
from stateguard.lineage import LineageGraph
from stateguard.manager import actions as A
from stateguard.manager.revisions import Revision
from stateguard.state import AnalyticalState


class Observation(BaseModel):
    """The compact runtime observation a policy decides on."""

    model_config = ConfigDict(frozen=True)

    event: str
    """turn_start | review | segment."""
    turn: int
    question: str
    answer: str | None = None
    pending_interval: tuple[int, int] | None = None
    pending_steps: tuple[dict[str, Any], ...] = ()
    draft: AnalyticalState | None = None
    draft_updated: bool = False
    relations_final: bool = False
    repair_attempts: int = 0
    last_action_result: str | None = None
    committed_index: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class PolicyContext:
    """What a policy may read at one activation: a snapshot, no handle that can write.

    ``probe`` runs code on a copy of the worker's namespace; ``load_state`` reads one
    stored state; ``committed`` are the committed states at activation time.
    """

    graph: LineageGraph
    probe: Callable[[str], ProbeResult]
    committed: tuple[AnalyticalState, ...]
    load_state: Callable[[str], AnalyticalState]
    steps: tuple[Step, ...]
    turn_steps: tuple[Step, ...]
    """The attempt under review: the turn's steps since its last repair."""
    pending_steps: tuple[Step, ...]
    question: str
    answer: str | None
    draft: AnalyticalState | None
    revisions: tuple[Revision, ...] = ()
    """Parameters revised in this or an earlier turn (`stateguard.manager.revisions`)."""
    refused: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    """Answers refused on review in this turn (`stateguard.manager.evidence.refusal_key`),
    with the findings that refused them."""
    this_turn_steps: tuple[Step, ...] = ()
    """Every step of the turn, attempts before a repair included: what the agent has seen
    printed in this turn (an answer may rest on a value an earlier attempt printed)."""


class Policy(Protocol):
    """Decides the manager's next action from an observation."""

    name: str

    @property
    def llm_calls(self) -> int:
        """Model calls made so far."""
        ...

    def next_action(self, obs: Observation, ctx: PolicyContext) -> A.ControlAction | A.ToolAction:
        """The next action of the current activation."""
        ...


def compact_step(s: Step) -> dict[str, Any]:
    """What an observation shows of one step (code head, status, versions)."""
    ex = s.execution
    return {
        "step": s.step,
        "code_head": (s.code or "").strip().splitlines()[:3],
        "status": ex.status if ex else None,
        "created": list(s.cell.created) if s.cell else [],
        "stale_reads": [r.version for r in s.cell.stale_reads] if s.cell else [],
        "answer": s.answer,
    }
