"""Structured results of the MCP tools: JSON-ready views of a guarded session."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from stateguard.guard import CellOutcome, Review, StaleValue
from stateguard.lineage import StaleReason
from stateguard.manager import Hint
from stateguard.state import AnalyticalState


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class Note(_Out):
    """A reference-only note from the manager (an observation to verify, not an instruction)."""

    kind: str
    text: str
    variables: list[str] = []

    @classmethod
    def of(cls, hint: Hint) -> Note:
        return cls(kind=hint.kind, text=hint.text, variables=list(hint.variables))


class Staleness(_Out):
    """Why one value is stale."""

    value: str
    """The stale version, ``name@vN``."""
    derived_from: str
    """The superseded version it was computed from."""
    superseded_by: str
    superseding_cell: int
    chain: list[str]
    explanation: str

    @classmethod
    def of(cls, reason: StaleReason) -> Staleness:
        return cls(
            value=reason.version,
            derived_from=reason.outdated,
            superseded_by=reason.superseded_by,
            superseding_cell=reason.superseding_cell,
            chain=list(reason.chain),
            explanation=reason.describe(),
        )


class CellResult(_Out):
    """One executed cell."""

    step: int
    cell: int | None
    """Lineage cell index (None when the kernel died before reporting)."""
    status: str
    stdout: str
    stderr: str
    result: str | None
    error: str | None
    created: list[str]
    """Versions the cell wrote (``name@vN``)."""
    stale_reads: list[Staleness]
    """Stale values the cell read; empty when it read none."""
    notes: list[Note]
    restarted: bool

    @classmethod
    def of(cls, outcome: CellOutcome) -> CellResult:
        ex = outcome.execution
        return cls(
            step=outcome.step,
            cell=outcome.cell.cell if outcome.cell else None,
            status=ex.status,
            stdout=ex.stdout,
            stderr=ex.stderr,
            result=ex.result,
            error=f"{ex.error.ename}: {ex.error.evalue}" if ex.error else None,
            created=list(outcome.cell.created) if outcome.cell else [],
            stale_reads=[Staleness.of(r) for r in outcome.stale_reads],
            notes=[Note.of(n) for n in outcome.notes],
            restarted=outcome.restarted,
        )


class StaleValues(_Out):
    """Every live value that is stale."""

    values: list[Staleness]

    @classmethod
    def of(cls, values: list[StaleValue]) -> StaleValues:
        return cls(values=[Staleness.of(v.reason) for v in values])


class WhyStale(_Out):
    """Whether a value is stale, and why."""

    name: str
    version: str
    stale: bool
    reason: Staleness | None


class StateSummary(_Out):
    """An analytical state in brief."""

    id: str
    issue: str
    status: str
    turn: int | None
    variables: list[str]
    conclusions: list[str]
    relations: list[str]

    @classmethod
    def of(cls, state: AnalyticalState) -> StateSummary:
        return cls(
            id=state.id,
            issue=state.issue,
            status=state.status,
            turn=state.turn,
            variables=[v.key for v in state.used_variables],
            conclusions=list(state.conclusions),
            relations=[r.summary for r in state.relations],
        )


class States(_Out):
    """Committed analytical states, oldest first."""

    states: list[StateSummary]


class TurnNotes(_Out):
    """A new question: its turn number and the manager's notes on earlier states."""

    turn: int
    notes: list[Note]


class AnswerReview(_Out):
    """The manager's verdict on a proposed answer."""

    accepted: bool
    notes: list[Note]

    @classmethod
    def of(cls, review: Review) -> AnswerReview:
        return cls(accepted=review.accepted, notes=[Note.of(n) for n in review.notes])
