"""A kernel session with lineage tracking: kernel in, versions out.

`TrackedSession` owns a `KernelSession`, installs the runtime pass in the
kernel, executes cells, and feeds each cell's report into a `LineageGraph`.
"""

from __future__ import annotations

import time
from types import TracebackType

from pydantic import BaseModel, ConfigDict, ValidationError

from stateguard.errors import LineageError
from stateguard.kernel import ExecutionResult, KernelSession
from stateguard.lineage.graph import CellRecord, LineageGraph
from stateguard.lineage.report import REPORT_MIME, CellReport

_INSTALL = "__import__('stateguard.lineage.runtime', fromlist=['install']).install()"
_RESET = (
    "get_ipython().reset(new_session=False, aggressive=False)\n"
    "__import__('stateguard.lineage.runtime', fromlist=['agent']).agent().reset()"
)


class TrackedResult(BaseModel):
    """An execution result and what lineage recorded for it."""

    model_config = ConfigDict(frozen=True)

    execution: ExecutionResult
    cell: CellRecord | None = None
    """None when tracking is off or the kernel died before reporting."""
    kernel_seconds: float = 0.0
    """Time the runtime pass spent in the kernel on this cell."""
    host_seconds: float = 0.0
    """Time spent on the host decoding the report and updating the graph."""


class TrackedSession:
    """Executes cells in a kernel and keeps their lineage."""

    def __init__(self, kernel: KernelSession, *, track: bool = True, setup_code: str = "") -> None:
        """`setup_code` runs silently (untracked) after every start, restart and reset."""
        self.kernel = kernel
        self.track = track
        self.setup_code = setup_code
        self.graph = LineageGraph()

    def start(self) -> None:
        """Start the kernel if needed and install the runtime pass."""
        if not self.kernel.is_alive():
            self.kernel.start()
        self._prepare()

    def _prepare(self) -> None:
        if self.track:
            self._silent(_INSTALL)
        if self.setup_code:
            self._silent(self.setup_code)

    def _silent(self, code: str) -> None:
        res = self.kernel.execute(code, silent=True, store_history=False)
        if not res.ok:
            detail = res.error.evalue if res.error else res.status
            raise LineageError(f"lineage bookkeeping failed in the kernel: {detail}")

    def stop(self) -> None:
        """Stop the kernel."""
        self.kernel.stop()

    def restart(self) -> None:
        """Restart the kernel: the namespace is empty, so nothing is live any more."""
        self.kernel.restart()
        self.graph.record_restart()
        self._prepare()

    def reset(self) -> None:
        """Clear the user namespace and start a new, empty lineage graph."""
        if self.track:
            self._silent(_RESET)
        else:
            self._silent("get_ipython().reset(new_session=False, aggressive=False)")
        self.graph = LineageGraph()
        if self.setup_code:
            self._silent(self.setup_code)

    def execute(self, code: str, timeout: float | None = None) -> TrackedResult:
        """Run one cell; record its lineage when the kernel reported it."""
        res = self.kernel.execute(code, timeout=timeout)
        if res.status == "dead":
            self.graph.record_restart()
        if not self.track:
            return TrackedResult(execution=res)
        payload = next((p.get("data") for p in res.private if p.get("mime") == REPORT_MIME), None)
        if payload is None:
            return TrackedResult(execution=res)
        started = time.perf_counter()
        try:
            if isinstance(payload, str):
                report = CellReport.model_validate_json(payload)
            else:
                report = CellReport.model_validate(payload)
        except ValidationError:
            return TrackedResult(execution=res)  # not a report this session can trust
        cell = self.graph.record_cell(report)
        return TrackedResult(
            execution=res,
            cell=cell,
            kernel_seconds=report.hook_seconds,
            host_seconds=time.perf_counter() - started,
        )

    def __enter__(self) -> TrackedSession:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
