"""Fixtures for the lineage tests: one tracked kernel per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession


@pytest.fixture(scope="module")
def tracked() -> Iterator[TrackedSession]:
    """One tracked kernel for the module (a generous timeout: a loaded machine)."""
    ts = TrackedSession(KernelSession(default_timeout=60))
    ts.start()
    try:
        yield ts
    finally:
        ts.stop()
