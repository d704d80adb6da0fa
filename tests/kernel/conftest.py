"""Shared fixtures for the kernel package tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stateguard.kernel import KernelSession, ResourceLimits


def _kernel_children() -> list[int]:
    """PIDs of live kernel processes started by this test process (zombies included)."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if ppid == me and (b"stateguard.kernel._launch" in cmdline or state == "Z"):
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="session", autouse=True)
def _no_kernel_left_behind() -> Iterator[None]:
    """After all kernel tests, no kernel process (or zombie) of ours may remain."""
    yield
    assert _kernel_children() == []


@pytest.fixture
def kernel_children() -> Callable[[], list[int]]:
    """Lists PIDs of kernel processes (or zombies) that are children of this test process."""
    return _kernel_children


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    """One kernel shared by a test module (tests must not depend on each other's state)."""
    workdir = tmp_path_factory.mktemp("work")
    with KernelSession(
        workdir=workdir, limits=ResourceLimits(max_output_chars=20_000), default_timeout=60
    ) as s:
        yield s
