"""`ShellExecutor`: the running IPython shell itself as a guarded session's executor.

Cells the user runs are executed by IPython as usual; the extension hands each
finished cell's result to the guarded session (`set_pending`), so nothing runs twice.
Bookkeeping (silent) code runs directly in the user namespace. Payloads published
under stateguard's private MIME prefix (the lineage report, probe results) are taken
out of the display stream, so the frontend never shows them.
"""

from __future__ import annotations

import contextlib
import io
import time
import traceback
from pathlib import Path
from typing import Any

from stateguard.errors import KernelError
from stateguard.kernel import ErrorInfo, ExecutionResult, ProbeResult
from stateguard.kernel.probe import PROBE_MIME
from stateguard.kernel.results import PRIVATE_MIME_PREFIX

_PROBE_CALL = "__import__('stateguard.kernel.probe', fromlist=['run_in_kernel']).run_in_kernel"


def _error(exc: BaseException) -> ErrorInfo:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return ErrorInfo(ename=type(exc).__name__, evalue=str(exc), traceback=lines)


class ShellExecutor:
    """Implements `stateguard.kernel.Executor` over an in-process IPython shell."""

    def __init__(self, shell: Any, *, max_output_chars: int = 100_000) -> None:
        self.shell = shell
        self.max_output_chars = max_output_chars
        self._alive = False
        self._private: list[dict[str, Any]] = []
        self._pending: ExecutionResult | None = None
        self._publish: Any = None

    # -- lifecycle -------------------------------------------------------------
    @property
    def workdir(self) -> Path:
        """The shell's current directory."""
        return Path.cwd()

    def start(self) -> None:
        """Start intercepting stateguard's private display payloads."""
        if self._alive:
            return
        pub = self.shell.display_pub
        self._publish = pub.publish
        pub.publish = self._intercept
        self._alive = True

    def stop(self) -> None:
        """Stop intercepting; the shell itself keeps running."""
        if self._alive and self._publish is not None:
            self.shell.display_pub.publish = self._publish
        self._alive = False

    def is_alive(self) -> bool:
        """True between `start` and `stop`."""
        return self._alive

    def restart(self) -> None:
        """The user's own shell is never restarted by stateguard."""
        raise KernelError("the IPython shell guarded in-process cannot be restarted")

    def interrupt(self) -> None:
        """Nothing runs in the background; nothing to interrupt."""

    def _intercept(self, data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        private = {k: v for k, v in data.items() if k.startswith(PRIVATE_MIME_PREFIX)}
        if not private:
            return self._publish(data, *args, **kwargs)
        self._private.extend({"mime": m, "data": v} for m, v in private.items())
        rest = {k: v for k, v in data.items() if k not in private}
        return self._publish(rest, *args, **kwargs) if rest else None

    def _take_private(self) -> list[dict[str, Any]]:
        out, self._private = self._private, []
        return out

    # -- execution -------------------------------------------------------------
    def set_pending(self, result: Any) -> None:
        """The IPython result of the cell the shell just ran; the next `execute` returns it."""
        err = result.error_before_exec or result.error_in_exec
        value = None if result.result is None else repr(result.result)
        self._pending = ExecutionResult(
            status="ok" if err is None else "error",
            result=value,
            error=None if err is None else _error(err),
            wall_time=0.0,
            execution_count=result.execution_count,
            private=self._take_private(),
        )

    def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        silent: bool = False,
        store_history: bool = True,
    ) -> ExecutionResult:
        """A pending user cell's result, or run silent bookkeeping code in the namespace."""
        if not self._alive:
            raise KernelError("the shell executor is not started")
        if not silent:
            if self._pending is None:
                raise KernelError("the shell executor only reports cells the shell already ran")
            result, self._pending = self._pending, None
            return result
        started = time.monotonic()
        out = io.StringIO()
        error: ErrorInfo | None = None
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, "<stateguard>", "exec"), self.shell.user_ns)
        except Exception as exc:
            error = _error(exc)
        return ExecutionResult(
            status="ok" if error is None else "error",
            stdout=out.getvalue(),
            error=error,
            wall_time=time.monotonic() - started,
            private=self._take_private(),
        )

    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run code on a fork of this process; the namespace is unchanged."""
        call = f"{_PROBE_CALL}({code!r}, {float(timeout)!r}, {self.max_output_chars!r})"
        res = self.execute(call, timeout, silent=True, store_history=False)
        payloads = [p["data"] for p in res.private if p.get("mime") == PROBE_MIME]
        if not res.ok or not payloads:
            error = res.error or ErrorInfo(
                ename="KernelError", evalue="the probe returned no result", traceback=[]
            )
            return ProbeResult(status="error", stdout=res.stdout, error=error, wall_time=0.0)
        payload: dict[str, Any] = payloads[-1]
        error_data = payload.get("error")
        return ProbeResult(
            status=payload["status"],
            stdout=payload.get("stdout", ""),
            result=payload.get("result"),
            value=payload.get("value"),
            error=ErrorInfo(**error_data) if error_data else None,
            wall_time=res.wall_time,
        )
