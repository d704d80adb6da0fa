"""Fixtures for the worker tests: a shared tracked kernel and a small data directory."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The fake OpenAI-compatible HTTP server lives with the llm tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from worker_helpers import MINI_CSV

from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession


@pytest.fixture(scope="module")
def mini_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory with one small CSV."""
    d = tmp_path_factory.mktemp("data")
    (d / "t.csv").write_text(MINI_CSV)
    return d


@pytest.fixture(scope="module")
def tracked_kernel(
    mini_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TrackedSession]:
    """One tracked kernel over `mini_data`, shared by a test module."""
    ts = TrackedSession(
        KernelSession(
            workdir=tmp_path_factory.mktemp("work"), data_dir=mini_data, default_timeout=30
        )
    )
    ts.start()
    try:
        yield ts
    finally:
        ts.stop()


@pytest.fixture
def tracked(tracked_kernel: TrackedSession) -> TrackedSession:
    """The module's tracked kernel, alive, with an empty namespace."""
    if not tracked_kernel.kernel.is_alive():
        tracked_kernel.restart()
    tracked_kernel.reset()
    return tracked_kernel
