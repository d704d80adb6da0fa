"""What a guarded session returns: typed, frozen values (no live handles)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from stateguard.audit.auditor import CellAudit
from stateguard.kernel import ExecutionResult
from stateguard.lineage import CellRecord, StaleReason
from stateguard.manager import Hint, ManagerEvent


class CellOutcome(BaseModel):
    """One executed cell: the execution, what lineage recorded, and the manager's notes."""

    model_config = ConfigDict(frozen=True)

    step: int
    """Global step index of the cell (0-based, across all turns)."""
    execution: ExecutionResult
    cell: CellRecord | None = None
    """None when tracking is off or the backend died before reporting."""
    notes: tuple[Hint, ...] = ()
    """Reference-only notes the manager wants the agent to read before its next step."""
    events: tuple[ManagerEvent, ...] = ()
    """Manager events logged while the cell was reviewed."""
    restarted: bool = False
    """The backend died in this cell and was restarted (the namespace is empty)."""
    audit: CellAudit | None = None
    """What the audit saw in the cell (join-guard findings, operator calls); None when the
    session runs without the audit. ``audit.describe()`` is the text for the agent."""

    @property
    def ok(self) -> bool:
        """The cell ran without error."""
        return self.execution.ok

    @property
    def stale_reads(self) -> tuple[StaleReason, ...]:
        """Why each stale value this cell read was stale (empty when none was)."""
        if self.cell is None:
            return ()
        return tuple(r.stale for r in self.cell.stale_reads if r.stale is not None)


class Review(BaseModel):
    """The manager's verdict on a proposed answer."""

    model_config = ConfigDict(frozen=True)

    step: int
    accepted: bool
    notes: tuple[Hint, ...] = ()
    """Repair notes when the answer is not accepted."""
    events: tuple[ManagerEvent, ...] = ()


class StaleValue(BaseModel):
    """A live value that is stale, and why."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    """``name@vN``."""
    reason: StaleReason
    explanation: str
    """``reason.describe()``: what it was derived from and which cell superseded that."""


class Lineage(BaseModel):
    """Where a value came from: its version, direct parents and all ancestors."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    cell: int
    """The cell that wrote this version."""
    parents: tuple[str, ...]
    ancestors: tuple[str, ...]
    stale: bool
