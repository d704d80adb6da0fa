"""Live access to the environment as it stands after a step: probes of a kernel fork.

A probe runs on a copy-on-write fork of the kernel's namespace (`Executor.run_probe`),
so whatever the verifier's code does dies with the fork: the worker's namespace,
execution count and IPython history are untouched, and the cost of one probe does not
depend on how many steps built the state.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from stateguard.kernel import ProbeResult


@runtime_checkable
class Environment(Protocol):
    """Something the verifier can run read-only code against."""

    def probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run ``code`` on a throw-away copy of the state; the state itself never changes."""
        ...


class _Prober(Protocol):
    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult: ...


class ProbeEnvironment:
    """An `Environment` over any executor with fork probes (`KernelSession`, an `Executor`)."""

    def __init__(self, executor: _Prober) -> None:
        """Wrap ``executor``; nothing runs until `probe`."""
        self.executor = executor

    def probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run ``code`` in a fork of the executor's namespace."""
        return self.executor.run_probe(code, timeout=timeout)
