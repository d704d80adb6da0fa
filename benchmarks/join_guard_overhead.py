"""Wall time of pandas merges with the join guard on vs off, measured side by side.

Each workload runs interleaved (off, on, off, on, ...) in this process, so a
noisy machine slows both alike. Prints the median time of each, the ratio of the
medians, the median of the per-pair ratios (each "on" run over the "off" run just
before it: steadier on a loaded machine), the median time the guard's own checks
took (`check_seconds`, measured directly inside the guard, so not blurred by the
machine's noise), that time as a share of the median plain merge, and the ratio of
median CPU times (`time.process_time`: the CPU this process used, which other
processes on a loaded machine do not inflate the way they inflate wall time).

    python benchmarks/join_guard_overhead.py [--repeats 15] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from stateguard.audit.joinguard import JoinGuard


def workloads(n: int) -> dict[str, Callable[[], object]]:
    """Name -> a merge over `n`-row frames."""
    rng = np.random.default_rng(0)
    facts = pd.DataFrame({"k": rng.integers(0, n // 10, n), "v": rng.random(n)})
    dim = pd.DataFrame({"k": rng.permutation(n // 10), "w": rng.random(n // 10)})
    left = pd.DataFrame({"k": rng.permutation(n), "a": rng.random(n)})
    right = pd.DataFrame({"k": rng.permutation(n), "b": rng.random(n)})
    skeys = pd.DataFrame({"k": [f"id{i}" for i in rng.permutation(n // 10)], "w": 1.0})
    sfacts = pd.DataFrame({"k": [f"id{i}" for i in rng.integers(0, n // 10, n)], "v": 1.0})
    half = right.iloc[: n // 2]
    return {
        f"many-to-one left merge {n:.0e}x{n // 10:.0e} (int key)": lambda: facts.merge(
            dim, on="k", how="left"
        ),
        f"one-to-one inner merge {n:.0e}x{n:.0e} (int key)": lambda: left.merge(right, on="k"),
        f"many-to-one inner merge {n:.0e}x{n // 10:.0e} (str key)": lambda: sfacts.merge(
            skeys, on="k"
        ),
        f"inner merge dropping half the rows {n:.0e}x{n // 2:.0e} (flagged)": lambda: left.merge(
            half, on="k"
        ),
    }


def main() -> None:
    """Run every workload with the guard off and on and print the comparison."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    guard = JoinGuard(None)
    print(
        f"{'workload':<62} {'off (ms)':>9} {'on (ms)':>9} {'ratio':>6} {'paired':>6} "
        f"{'checks (ms)':>11} {'share':>6} {'cpu':>6}"
    )
    for name, run in workloads(args.rows).items():
        off: list[float] = []
        on: list[float] = []
        cpu_off: list[float] = []
        cpu_on: list[float] = []
        checks: list[float] = []
        run()  # warm up caches of both paths
        for _ in range(args.repeats):
            t, c = time.perf_counter(), time.process_time()
            run()
            off.append(time.perf_counter() - t)
            cpu_off.append(time.process_time() - c)
            guard.install()
            try:
                guard.records.clear()
                t, c = time.perf_counter(), time.process_time()
                run()
                on.append(time.perf_counter() - t)
                cpu_on.append(time.process_time() - c)
                checks.append(guard.records[-1].check_seconds)
            finally:
                guard.uninstall()
        m_off, m_on = statistics.median(off), statistics.median(on)
        paired = statistics.median(b / a for a, b in zip(off, on, strict=True))
        m_checks = statistics.median(checks)
        cpu = statistics.median(cpu_on) / statistics.median(cpu_off)
        print(
            f"{name:<62} {m_off * 1e3:>9.1f} {m_on * 1e3:>9.1f} {m_on / m_off:>6.3f} "
            f"{paired:>6.3f} {m_checks * 1e3:>11.2f} {m_checks / m_off:>6.1%} {cpu:>6.3f}"
        )


if __name__ == "__main__":
    main()
