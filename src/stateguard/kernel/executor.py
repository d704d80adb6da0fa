"""`Executor`: what stateguard needs from anything that runs the agent's code.

Our ipykernel `KernelSession` is one implementation. Another backend (a remote
kernel, a container, a test double) implements these methods and can be guarded
by `stateguard.guard.GuardedSession` unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from stateguard.kernel.results import ExecutionResult, ProbeResult


@runtime_checkable
class Executor(Protocol):
    """A persistent Python namespace that executes cells.

    ``execute`` never raises for user errors: a failing cell is an `ExecutionResult`
    with status ``"error"``; a dead backend answers ``"dead"`` until `restart`.
    ``silent`` cells (bookkeeping) do not count as cells of the session.
    """

    @property
    def workdir(self) -> Path:
        """The directory the code runs in (files the code writes land here)."""
        ...

    def start(self) -> None:
        """Start the backend."""
        ...

    def stop(self) -> None:
        """Stop the backend; idempotent."""
        ...

    def is_alive(self) -> bool:
        """True while the backend can execute."""
        ...

    def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        silent: bool = False,
        store_history: bool = True,
    ) -> ExecutionResult:
        """Run one cell in the persistent namespace."""
        ...

    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run code on a copy of the namespace; the namespace itself never changes."""
        ...

    def restart(self) -> None:
        """Replace the backend by a fresh one with an empty namespace."""
        ...

    def interrupt(self) -> None:
        """Interrupt the running cell, if any."""
        ...
