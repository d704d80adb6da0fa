"""Paired cluster bootstrap: the vectorized metric against a per-resample Python metric.

Both draw the same resamples of two 400-task runs (same seed); this prints their wall
times side by side, interleaved, the ratio, and how far their intervals differ.

    python benchmarks/bootstrap_speed.py [--repeats 3] [--resamples 1000] [--tasks 400]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from stateguard.bench.bootstrap import paired_bootstrap
from stateguard.bench.metrics import TurnRecord, turn_accuracy


def _run(rng: np.random.Generator, tasks: int, p: float) -> list[TurnRecord]:
    out = []
    for t in range(tasks):
        n = int(rng.integers(1, 8))
        out += [
            TurnRecord(task_id=f"t{t}", turn_id=i + 1, n_turns=n, correct=bool(rng.random() < p))
            for i in range(n)
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--tasks", type=int, default=400)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a, b = _run(rng, args.tasks, 0.5), _run(rng, args.tasks, 0.55)
    times: dict[str, list[float]] = {"vectorized": [], "python metric": []}
    results = {}
    for _ in range(args.repeats):
        for name, metric in (("vectorized", "turn_accuracy"), ("python metric", turn_accuracy)):
            start = time.perf_counter()
            results[name] = paired_bootstrap(a, b, metric=metric, n_resamples=args.resamples)
            times[name].append(time.perf_counter() - start)
    fast, slow = (statistics.median(times[k]) for k in ("vectorized", "python metric"))
    print(f"{args.resamples} resamples of {args.tasks} tasks, median of {args.repeats}:")
    print(f"  vectorized     {fast * 1000:8.1f} ms")
    print(f"  python metric  {slow * 1000:8.1f} ms")
    print(f"  ratio python/vectorized: {slow / fast:.1f}x")
    v, p = results["vectorized"], results["python metric"]
    gap = max(abs(v.ci_low - p.ci_low), abs(v.ci_high - p.ci_high))
    print(f"  interval: [{v.ci_low:.4f}, {v.ci_high:.4f}] vs [{p.ci_low:.4f}, {p.ci_high:.4f}]")
    print(f"  largest difference of the bounds: {gap:.2e}")


if __name__ == "__main__":
    main()
