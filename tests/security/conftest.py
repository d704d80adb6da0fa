"""Fixtures for the security probes: model-written code run through a real kernel session.

Every probe runs through `KernelSession` with its default sandbox policy. Where
bubblewrap is missing the session runs unconfined; probes of what only the sandbox
blocks then assert that the session *says* it is unconfined, and stop there
(`security_probes.require_confined`). Set ``STATEGUARD_SANDBOX=required`` (CI does) to make a
missing or broken sandbox a failure instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stateguard.kernel import KernelSession, ResourceLimits

CSV = "city,temp\nOslo,3\nLima,19\n"


@pytest.fixture(scope="module")
def task_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A task folder with data, a task file and gold, and a run directory beside it."""
    root = tmp_path_factory.mktemp("task")
    (root / "data").mkdir()
    (root / "data" / "file.csv").write_text(CSV)
    (root / "task.yaml").write_text(
        "name: t\ndata: data\nturns:\n  - question: q\n    answer: 42\n"
    )
    (root / "gold").mkdir()
    (root / "gold" / "turn1.json").write_text('{"answer": 42}')
    run = root / "run"
    (run / "workdir").mkdir(parents=True)
    (run / "trajectory.jsonl").write_text('{"kind": "genuine"}\n')
    (run / "states.sqlite").write_bytes(b"")
    return root


@pytest.fixture(scope="module")
def session(task_tree: Path) -> Iterator[KernelSession]:
    """One kernel in the run directory's workdir, seeing the task's data read-only."""
    with KernelSession(
        workdir=task_tree / "run" / "workdir",
        data_dir=task_tree / "data",
        limits=ResourceLimits(max_output_chars=50_000),
        default_timeout=60,
    ) as s:
        yield s
