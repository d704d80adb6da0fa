"""Paired cluster bootstrap: known answers, pairing, reproducibility (speed:
``benchmarks/bootstrap_speed.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from stateguard.bench.bootstrap import paired_bootstrap
from stateguard.bench.metrics import TurnRecord, task_macro_accuracy


def run(outcomes: dict[str, list[bool | None]]) -> list[TurnRecord]:
    return [
        TurnRecord(task_id=task, turn_id=i + 1, n_turns=len(turns), correct=c)
        for task, turns in outcomes.items()
        for i, c in enumerate(turns)
    ]


def random_outcomes(
    rng: np.random.Generator, n_tasks: int, p: float
) -> dict[str, list[bool | None]]:
    return {
        f"t{k}": [bool(x) for x in rng.random(int(rng.integers(2, 9))) < p] for k in range(n_tasks)
    }


def test_identical_runs_give_zero_width_zero() -> None:
    records = run(random_outcomes(np.random.default_rng(1), 40, 0.6))
    result = paired_bootstrap(records, records, n_resamples=2000)
    assert result.mean_diff == 0.0 and result.ci_low == 0.0 and result.ci_high == 0.0
    assert result.n_tasks == 40


def test_one_more_correct_turn_per_task_is_exact() -> None:
    a = {f"t{k}": [True, False, False, False, False] for k in range(30)}
    b = {f"t{k}": [True, True, False, False, False] for k in range(30)}
    result = paired_bootstrap(run(a), run(b), n_resamples=3000)
    assert result.mean_diff == pytest.approx(1 / 5)
    assert result.ci_low == pytest.approx(1 / 5) and result.ci_high == pytest.approx(1 / 5)
    macro = paired_bootstrap(run(a), run(b), metric="task_macro_accuracy", n_resamples=500)
    assert macro.mean_diff == pytest.approx(
        1 / 5
    ) and macro.ci_high - macro.ci_low == pytest.approx(0)


def test_unequal_task_lengths_weight_turns() -> None:
    a = {"short": [False], "long": [False, False, False]}
    b = {"short": [True], "long": [False, False, False]}
    result = paired_bootstrap(run(a), run(b), n_resamples=4000, seed=3)
    assert result.mean_diff == pytest.approx(1 / 4)  # one more right turn out of 4
    # resamples: both short -> 1, both long -> 0, one each -> 1/4
    assert result.ci_low == pytest.approx(0.0) and result.ci_high == pytest.approx(1.0)


def test_seeded_reproducibility_and_seed_sensitivity() -> None:
    rng = np.random.default_rng(7)
    a, b = run(random_outcomes(rng, 60, 0.5)), run(random_outcomes(rng, 60, 0.6))
    first = paired_bootstrap(a, b, seed=11, n_resamples=2000)
    assert paired_bootstrap(a, b, seed=11, n_resamples=2000) == first
    other = paired_bootstrap(a, b, seed=12, n_resamples=2000)
    assert other.mean_diff == first.mean_diff
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)
    assert first.ci_low <= first.mean_diff <= first.ci_high


def test_pairs_only_turns_scored_in_both_runs() -> None:
    a = run({"x": [True, None, False], "y": [True]})
    b = run({"x": [True, True, True]})
    result = paired_bootstrap(a, b, n_resamples=200)
    assert result.n_tasks == 1 and result.n_turns == 2
    assert result.mean_diff == pytest.approx(1 / 2)


def test_callable_metric_matches_vectorized() -> None:
    rng = np.random.default_rng(5)
    a, b = run(random_outcomes(rng, 15, 0.5)), run(random_outcomes(rng, 15, 0.7))
    fast = paired_bootstrap(a, b, metric="task_macro_accuracy", n_resamples=300, seed=2)
    slow = paired_bootstrap(a, b, metric=task_macro_accuracy, n_resamples=300, seed=2)
    assert slow.mean_diff == pytest.approx(fast.mean_diff)
    assert slow.ci_low == pytest.approx(fast.ci_low) and slow.ci_high == pytest.approx(fast.ci_high)


def test_errors() -> None:
    with pytest.raises(ValueError, match="no turn is scored"):
        paired_bootstrap(run({"x": [None]}), run({"x": [True]}))
    records = run({"x": [True]})
    with pytest.raises(ValueError):
        paired_bootstrap(records, records, n_resamples=0)
    with pytest.raises(ValueError, match="unknown metric"):
        paired_bootstrap(records, records, metric="f1")  # type: ignore[arg-type]
