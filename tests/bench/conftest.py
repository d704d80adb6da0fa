"""Shared fixtures of the bench tests: locations of the shared benchmark data and fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_BENCHMARKS = REPO_ROOT.parent / "shared" / "benchmarks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def dseval_root() -> Path:
    """The DSEval exercise suite shipped in shared/."""
    root = SHARED_BENCHMARKS / "dseval" / "exercise"
    if not root.is_dir():
        pytest.skip(f"shared benchmark data not found at {root}")
    return root


@pytest.fixture(scope="session")
def infiagent_root() -> Path:
    """The InfiAgent-DABench dev set shipped in shared/."""
    root = SHARED_BENCHMARKS / "infiagent-dabench"
    if not root.is_dir():
        pytest.skip(f"shared benchmark data not found at {root}")
    return root


@pytest.fixture(scope="session")
def longds_toy() -> Path:
    """The LongDS-format fixture task of this test package."""
    return FIXTURES / "longds_toy"
