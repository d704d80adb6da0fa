"""An in-process `Executor` for tests: a dict namespace, ``exec``, captured stdout.

It implements the protocol and nothing more: silent bookkeeping cells (lineage
install, checkpoints) succeed without effect, so lineage records no cells.
``os._exit`` in a cell makes it "die" until `restart`.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import time
from pathlib import Path

from stateguard.kernel import ErrorInfo, ExecutionResult, ProbeResult


class FakeExecutor:
    """Runs cells with ``exec`` in one namespace."""

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self.namespace: dict[str, object] = {}
        self.cells: list[str] = []
        self.alive = False
        self.starts = 0
        self.interrupts = 0

    @property
    def workdir(self) -> Path:
        return self._workdir

    def start(self) -> None:
        self.alive = True
        self.starts += 1

    def stop(self) -> None:
        self.alive = False

    def is_alive(self) -> bool:
        return self.alive

    def restart(self) -> None:
        self.namespace = {}
        self.start()

    def interrupt(self) -> None:
        self.interrupts += 1

    def _run(
        self, code: str, namespace: dict[str, object]
    ) -> tuple[str, str | None, ErrorInfo | None]:
        out = io.StringIO()
        tree = ast.parse(code)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(tree, "<cell>", "exec"), namespace)
                value = None
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
        except Exception as exc:
            return out.getvalue(), None, ErrorInfo(ename=type(exc).__name__, evalue=str(exc))
        return out.getvalue(), None if value is None else repr(value), None

    def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        silent: bool = False,
        store_history: bool = True,
    ) -> ExecutionResult:
        started = time.monotonic()
        if not self.alive:
            raise RuntimeError("the fake executor is not running")
        if silent:
            return ExecutionResult(status="ok", wall_time=0.0)
        self.cells.append(code)
        if "os._exit" in code:
            self.alive = False
            error = ErrorInfo(ename="KernelDied", evalue="the fake kernel exited")
            return ExecutionResult(status="dead", error=error, wall_time=0.0)
        stdout, result, error = self._run(code, self.namespace)
        return ExecutionResult(
            status="ok" if error is None else "error",
            stdout=stdout,
            result=result,
            error=error,
            wall_time=time.monotonic() - started,
            execution_count=len(self.cells),
        )

    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        stdout, result, error = self._run(code, _copy(self.namespace))
        return ProbeResult(
            status="ok" if error is None else "error",
            stdout=stdout,
            result=result,
            error=error,
            wall_time=0.0,
        )


def _copy(namespace: dict[str, object]) -> dict[str, object]:
    """A copy the probe may change without touching the namespace (modules are shared)."""
    out: dict[str, object] = {}
    for name, value in namespace.items():
        try:
            out[name] = copy.deepcopy(value)
        except TypeError:
            out[name] = value
    return out
