"""Fixtures for manager tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession


@pytest.fixture
def tracked() -> Iterator[TrackedSession]:
    s = TrackedSession(KernelSession())
    s.start()
    try:
        yield s
    finally:
        s.stop()
