"""Result models of kernel executions and probes (the kernel package's boundary types)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

KEPT_MIMES: tuple[str, ...] = ("text/plain", "text/html", "image/png")
"""MIME types kept in `DisplayData.data`; every other rich representation is dropped."""

PRIVATE_MIME_PREFIX = "application/vnd.stateguard."
"""display_data bundles carrying a MIME type with this prefix go to `ExecutionResult.private`."""


ExecutionStatus = Literal["ok", "error", "timeout", "dead"]


class ErrorInfo(BaseModel, frozen=True):
    """An exception raised by user code (or a synthetic one for timeouts and kernel death)."""

    ename: str
    evalue: str
    traceback: list[str] = Field(default_factory=list)
    """Formatted traceback lines, ANSI escape codes stripped."""


class DisplayData(BaseModel, frozen=True):
    """One rich output (display_data or execute_result), reduced to `KEPT_MIMES`."""

    data: dict[str, Any]


class ExecutionResult(BaseModel, frozen=True):
    """Everything one `KernelSession.execute` call produced.

    Invariants: `error` is set iff `status != "ok"`; for ``"timeout"`` its ename is
    ``"TimeoutError"``, for ``"dead"`` it is ``"KernelDied"``.
    """

    status: ExecutionStatus
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    """text/plain representation of the cell's last expression (execute_result), if any."""
    displays: list[DisplayData] = Field(default_factory=list)
    """Rich outputs in arrival order; an execute_result appears here too with its full bundle."""
    error: ErrorInfo | None = None
    wall_time: float
    """Seconds from sending the request to having the complete result."""
    execution_count: int | None = None
    """The IPython prompt number of the cell; None for silent/no-history executions."""
    private: list[dict[str, Any]] = Field(default_factory=list)
    """``{"mime": ..., "data": ...}`` for each `PRIVATE_MIME_PREFIX` payload (never in displays)."""

    @property
    def ok(self) -> bool:
        """True when the cell ran to completion without raising."""
        return self.status == "ok"


class ProbeResult(BaseModel, frozen=True):
    """Outcome of `KernelSession.run_probe`: code run on a throw-away fork of the namespace."""

    status: Literal["ok", "error", "timeout"]
    stdout: str = ""
    result: str | None = None
    """text/plain representation of the last expression, if the code ends with one."""
    value: Any | None = None
    """The last expression's value when it is JSON-serializable, else None."""
    error: ErrorInfo | None = None
    wall_time: float

    @property
    def ok(self) -> bool:
        """True when the probe code ran to completion without raising."""
        return self.status == "ok"
