"""Shared fixtures of the train tests: a small synthesized dataset and the shared suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from stateguard.train.dataset import DatasetCard, synth_dataset
from stateguard.train.export import ExportConfig
from stateguard.train.records import ManagerTrajectory, read_trajectories
from stateguard.train.synth import SynthConfig

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI = FIXTURES / "mini_dseval"
SHARED_DSEVAL = Path(__file__).resolve().parents[2].parent / "shared/benchmarks/dseval/exercise"


@pytest.fixture(scope="session")
def mini_dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DatasetCard]:
    """The two-session fixture suite synthesized with every injector (one fault each)."""
    out = tmp_path_factory.mktemp("mini-dataset")
    card = synth_dataset(
        SynthConfig(suite="dseval", path=MINI, faults_per_task=2, cell_timeout=60),
        ExportConfig(lifecycle_share=0.25, val_fraction=0.5, split_seed=0),
        out,
    )
    return out, card


@pytest.fixture(scope="session")
def mini_trajectories(mini_dataset: tuple[Path, DatasetCard]) -> list[ManagerTrajectory]:
    """The kept trajectories of `mini_dataset`."""
    return list(read_trajectories(mini_dataset[0] / "trajectories.jsonl"))


@pytest.fixture(scope="session")
def dseval_root() -> Path:
    """The DSEval exercise suite shipped in shared/."""
    if not SHARED_DSEVAL.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED_DSEVAL}")
    return SHARED_DSEVAL
