"""A kernel session with lineage tracking: kernel in, versions out.

`TrackedSession` owns an executor (any `stateguard.kernel.Executor`; our ipykernel
`KernelSession` is one), installs the runtime pass in it, executes cells, checks
each cell's report (session token and count), and feeds it into a `LineageGraph`.
"""

from __future__ import annotations

import secrets
import time
from types import TracebackType

from pydantic import BaseModel, ConfigDict, ValidationError

from stateguard.errors import LineageError
from stateguard.kernel import ExecutionResult, Executor
from stateguard.lineage.graph import CellRecord, LineageGraph
from stateguard.lineage.report import REPORT_MIME, CellReport

_INSTALL = "__import__('stateguard.lineage.runtime', fromlist=['install']).install(token={!r})"
_REARM = "__import__('stateguard.lineage.runtime', fromlist=['rearm']).rearm({!r}, {!r})"
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

    def __init__(
        self,
        kernel: Executor,
        *,
        track: bool = True,
        setup_code: str = "",
        by_value: bool = True,
    ) -> None:
        """`setup_code` runs silently (untracked) after every start, restart and reset.
        ``by_value`` (`LineageGraph.by_value`): a rebinding to the same value is no new
        version; ``False`` versions every rebinding."""
        self.kernel = kernel
        self.track = track
        self.setup_code = setup_code
        self.by_value = by_value
        self.graph = LineageGraph(by_value=by_value)
        self._token = secrets.token_hex(16)
        self._seq = 0

    def start(self) -> None:
        """Start the kernel if needed and install the runtime pass."""
        if not self.kernel.is_alive():
            self.kernel.start()
        self._prepare()

    def _prepare(self) -> None:
        if self.track:
            self._silent(_INSTALL.format(self._token))
            self._seq = 0
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
        self.graph = LineageGraph(by_value=self.by_value)
        if self.setup_code:
            self._silent(self.setup_code)

    def execute(self, code: str, timeout: float | None = None) -> TrackedResult:
        """Run one cell; record its lineage when the kernel reported it."""
        res = self.kernel.execute(code, timeout=timeout)
        if res.status == "dead":
            self.graph.record_restart()
        if not self.track:
            return TrackedResult(execution=res)
        if res.status == "dead" or not code.strip():
            return TrackedResult(execution=res)  # a blank cell runs no hooks, nothing at all
        started = time.perf_counter()
        reports = [
            r
            for p in res.private
            if p.get("mime") == REPORT_MIME and (r := self._decode(p.get("data"))) is not None
        ]
        valid = [r for r in reports if r.token == self._token and r.seq == self._seq + 1]
        if len(valid) != 1:
            reason = (
                "no lineage report came back (the hooks were removed or disabled)"
                if not reports
                else f"{len(reports)} report(s), {len(valid)} from this session's pass"
            )
            cell = self.graph.record_unverified(code, reason)
            self._rearm()
            return TrackedResult(
                execution=res, cell=cell, host_seconds=time.perf_counter() - started
            )
        report = valid[0]
        self._seq = report.seq
        if report.unobserved is not None:
            cell = self.graph.record_unverified(code, report.unobserved)
            self._rearm()
            return TrackedResult(
                execution=res, cell=cell, host_seconds=time.perf_counter() - started
            )
        cell = self.graph.record_cell(report)
        return TrackedResult(
            execution=res,
            cell=cell,
            kernel_seconds=report.hook_seconds,
            host_seconds=time.perf_counter() - started,
        )

    @staticmethod
    def _decode(payload: object) -> CellReport | None:
        try:
            if isinstance(payload, str):
                return CellReport.model_validate_json(payload)
            return CellReport.model_validate(payload)
        except ValidationError:
            return None  # not a report at all

    def _rearm(self) -> None:
        """Turn the runtime pass back on: the next report says what changed meanwhile."""
        if self.kernel.is_alive():
            self._silent(_REARM.format(self._token, self._seq))

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
