"""Fixtures for the report tests: a realistic run directory built from the real models."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_fixture import build_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A complete run directory (trajectory, answers, states, notebook)."""
    return build_run(tmp_path)
