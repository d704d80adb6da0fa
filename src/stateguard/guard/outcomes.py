"""What a guarded session returns: typed, frozen values (no live handles)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from stateguard.audit.auditor import CellAudit
from stateguard.kernel import ExecutionResult
from stateguard.lineage import CellRecord, StaleReason
from stateguard.manager import Hint, ManagerEvent


class Rebuild(BaseModel):
    """How a restarted kernel's state was rebuilt: the cells that had succeeded, run again."""

    model_config = ConfigDict(frozen=True)

    replayed: tuple[int | None, ...] = ()
    """Steps of the cells run again, in order (None: a setup cell the agent did not write)."""
    seconds: float = 0.0
    failed: int | None = None
    """Index (in ``replayed`` order) of a cell that did not succeed again; rebuilding stopped."""
    error: str = ""

    def describe(self) -> str:
        """What happened, for the agent."""
        head = "The Python session crashed and was restarted."
        if not self.replayed:
            return f"{head} No earlier cell had succeeded, so nothing was rebuilt."
        named = ["setup" if s is None else str(s) for s in self.replayed]
        steps = ", ".join(named if len(named) <= 12 else [*named[:5], "…", *named[-5:]])
        if self.failed is None:
            return (
                f"{head} Its state was rebuilt by running again, in {self.seconds:.1f}s, "
                f"the {len(self.replayed)} earlier cells that had succeeded (steps {steps}); "
                "what cells that failed had left behind is gone."
            )
        at = self.replayed[self.failed]
        stop = "a setup cell" if at is None else f"step {at}"
        return (
            f"{head} Rebuilding it by running again the earlier cells that had succeeded "
            f"(steps {steps}) stopped at {stop}, which failed this time ({self.error}); "
            f"the variables of {stop} and later cells are missing: recompute them."
        )


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
    """The backend died in this cell and was restarted (see ``rebuild``)."""
    rebuild: Rebuild | None = None
    """How the restarted backend's state was rebuilt; None when it was not (empty)."""
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
