"""Paired cluster bootstrap over tasks for comparing two runs.

Turns are paired by ``(task_id, turn_id)``; only pairs scored in both runs count. Each
resample draws the paired tasks with replacement (turns of a task stay together, since
they are correlated through the session) and computes ``metric(B) - metric(A)`` over the
turns of the drawn tasks. ``mean_diff`` is that difference on the original sample; the
interval is the percentile interval of the resampled differences.

The built-in metrics are vectorized: a resample is a row of per-task draw counts
``W`` (multinomial), so turn accuracy is ``W @ correct_per_task / W @ turns_per_task``.
A callable metric of a record list is also accepted and evaluated per resample (slow).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from stateguard.bench.metrics import TurnRecord

MetricName = Literal["turn_accuracy", "task_macro_accuracy"]
RecordMetric = Callable[[list[TurnRecord]], float | None]


class BootstrapResult(BaseModel):
    """Observed difference B − A and its bootstrap percentile interval."""

    model_config = ConfigDict(frozen=True)

    mean_diff: float
    ci_low: float
    ci_high: float
    n_tasks: int
    n_turns: int
    n_resamples: int
    confidence: float


def _paired(
    records_a: Sequence[TurnRecord], records_b: Sequence[TurnRecord]
) -> tuple[list[str], dict[str, list[tuple[TurnRecord, TurnRecord]]]]:
    a = {(r.task_id, r.turn_id): r for r in records_a if r.scored}
    by_task: dict[str, list[tuple[TurnRecord, TurnRecord]]] = defaultdict(list)
    for r in records_b:
        key = (r.task_id, r.turn_id)
        if r.scored and key in a:
            by_task[r.task_id].append((a[key], r))
    return sorted(by_task), by_task


def _draw_counts(rng: np.random.Generator, n_tasks: int, n_resamples: int) -> np.ndarray:
    """``(n_resamples, n_tasks)`` counts of how often each task is drawn (rows sum to n_tasks)."""
    return rng.multinomial(n_tasks, np.full(n_tasks, 1.0 / n_tasks), size=n_resamples)


def paired_bootstrap(
    records_a: Sequence[TurnRecord],
    records_b: Sequence[TurnRecord],
    metric: MetricName | RecordMetric = "turn_accuracy",
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired cluster bootstrap of ``metric(B) - metric(A)`` over tasks.

    Raises ValueError when no turn is scored in both runs or an argument is out of range.
    """
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ValueError("n_resamples must be >= 1 and confidence in (0, 1)")
    tasks, by_task = _paired(records_a, records_b)
    if not tasks:
        raise ValueError("no turn is scored in both runs")
    rng = np.random.default_rng(seed)
    counts = _draw_counts(rng, len(tasks), n_resamples)
    n_turns = sum(len(by_task[t]) for t in tasks)

    if callable(metric):
        observed, diffs = _generic(metric, tasks, by_task, counts)
    else:
        turns = np.array([len(by_task[t]) for t in tasks], dtype=float)
        right_a = np.array(
            [sum(bool(a.correct) for a, _ in by_task[t]) for t in tasks], dtype=float
        )
        right_b = np.array(
            [sum(bool(b.correct) for _, b in by_task[t]) for t in tasks], dtype=float
        )
        if metric == "turn_accuracy":
            observed = float((right_b.sum() - right_a.sum()) / turns.sum())
            diffs = (counts @ (right_b - right_a)) / (counts @ turns)
        elif metric == "task_macro_accuracy":
            per_task = (right_b - right_a) / turns
            observed = float(per_task.mean())
            diffs = (counts @ per_task) / len(tasks)
        else:
            raise ValueError(f"unknown metric {metric!r}")
    alpha = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(diffs, [alpha, 1.0 - alpha])
    return BootstrapResult(
        mean_diff=observed,
        ci_low=float(low),
        ci_high=float(high),
        n_tasks=len(tasks),
        n_turns=n_turns,
        n_resamples=n_resamples,
        confidence=confidence,
    )


def _generic(
    metric: RecordMetric,
    tasks: list[str],
    by_task: dict[str, list[tuple[TurnRecord, TurnRecord]]],
    counts: np.ndarray,
) -> tuple[float, np.ndarray]:
    """Observed and resampled differences of an arbitrary record metric (one call per resample)."""

    def diff(weights: Sequence[int]) -> float:
        side_a: list[TurnRecord] = []
        side_b: list[TurnRecord] = []
        for task, times in zip(tasks, weights, strict=True):
            for copy in range(int(times)):
                # Copies of a task get distinct ids so per-task metrics see separate tasks.
                suffix = f"#{copy}" if copy else ""
                for a, b in by_task[task]:
                    side_a.append(a.model_copy(update={"task_id": a.task_id + suffix}))
                    side_b.append(b.model_copy(update={"task_id": b.task_id + suffix}))
        value_a, value_b = metric(side_a), metric(side_b)
        if value_a is None or value_b is None:
            return float("nan")
        return value_b - value_a

    observed = diff([1] * len(tasks))
    return observed, np.array([diff(row) for row in counts])
