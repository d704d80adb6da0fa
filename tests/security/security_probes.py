"""Helpers shared by the security probes (imported by the test modules)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from stateguard.kernel import KernelSession
from stateguard.kernel.results import ExecutionResult


def require_confined(session: KernelSession) -> None:
    """Stop a probe of what only the sandbox blocks, after checking the loud report."""
    confinement = session.confinement
    if confinement.confined:
        return
    assert confinement.reason
    assert confinement.describe().startswith("UNCONFINED: ")
    pytest.skip(f"kernel is unconfined ({confinement.reason}); reported as such")


def run(session: KernelSession, code: str, timeout: float = 30) -> ExecutionResult:
    """Execute `code`, failing the test with the kernel's error if the cell itself failed."""
    res = session.execute(code, timeout=timeout)
    assert res.ok, res.error
    return res


def find_processes(marker: str) -> list[int]:
    """Host pids of live (non-zombie) processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(int(entry.name))
    return found


def wait_gone(marker: str, seconds: float = 30.0) -> list[int]:
    """Wait until no process carries `marker`; returns those still alive after `seconds`."""
    deadline = time.monotonic() + seconds
    while (alive := find_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive
