"""Cost of verifying step k: a fork probe of the live kernel vs re-executing the code prefix.

A 40-step analysis (a 300,000-row frame, then one derived column or aggregate per
step) runs once in a tracked kernel; at steps 1, 10 and 40 the deterministic
`StepVerifier` checks the step through a fork probe of that kernel (the probe sees
the state as it stands, whatever built it). Side by side, in the same run, the
prefix-replay way re-creates the environment for step k as a released evaluator
does: a fresh kernel re-executes steps 1..k, then the same verifier runs on it.
Prints median wall times and ratios (replay / fork), with and without the fresh
kernel's start-up.

    python benchmarks/verify_probe_cost.py [--repeats 3] [--rows 300000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from stateguard.checks import Step
from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession
from stateguard.verify import ProbeEnvironment, StepVerifier, VerifyTask

AT = (1, 10, 40)
TASK = VerifyTask(question="Which region has the highest mean margin?")


def steps_code(rows: int) -> list[str]:
    """Step 1 builds the data; steps 2..40 each derive one column or aggregate."""
    first = (
        "import numpy as np, pandas as pd\n"
        "rng = np.random.default_rng(0)\n"
        f"df = pd.DataFrame({{'region': rng.integers(0, 50, {rows}),"
        f" 'rev': rng.random({rows}) * 100, 'cost': rng.random({rows}) * 60}})\n"
        "df['margin'] = df['rev'] - df['cost']\n"
        "print(len(df))"
    )
    out = [first]
    for i in range(2, 41):
        if i % 2:
            out.append(
                f"df['m{i}'] = df['margin'] * {1 + i / 100}\n"
                f"top{i} = df.groupby('region')['m{i}'].mean().idxmax()\nprint(top{i})"
            )
        else:
            out.append(
                f"s{i} = df.sort_values('margin').groupby('region').tail({i})"
                f"['rev'].sum()\nprint(round(s{i}, 2))"
            )
    return out


def step_of(code: str, tracked: TrackedSession) -> Step:
    res = tracked.execute(code)
    assert res.execution.ok, res.execution.error
    return Step(code=code, observation=res.execution.stdout, execution=res.execution, cell=res.cell)


def fork_times(codes: list[str], repeats: int) -> dict[int, float]:
    """Verification time at each step of `AT`, through a fork probe of the one live kernel."""
    verifier, out = StepVerifier("deterministic"), {}
    with TrackedSession(KernelSession(default_timeout=300)) as tracked:
        env, steps = ProbeEnvironment(tracked.kernel), []
        for k, code in enumerate(codes, 1):
            steps.append(step_of(code, tracked))
            if k in AT:
                samples = []
                for _ in range(repeats):
                    t = time.perf_counter()
                    verdict = verifier.verify(TASK, steps, env=env)
                    samples.append(time.perf_counter() - t)
                assert verdict.score == 1.0, verdict
                out[k] = statistics.median(samples)
    return out


def replay_times(codes: list[str], k: int, repeats: int) -> tuple[float, float]:
    """(with kernel start, without): fresh kernel, re-execute steps 1..k, then verify."""
    verifier, total, warm = StepVerifier("deterministic"), [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        with TrackedSession(KernelSession(default_timeout=300)) as tracked:
            t1 = time.perf_counter()
            steps = [step_of(code, tracked) for code in codes[:k]]
            verdict = verifier.verify(TASK, steps, env=ProbeEnvironment(tracked.kernel))
            t2 = time.perf_counter()
        assert verdict.score == 1.0, verdict
        total.append(t2 - t0)
        warm.append(t2 - t1)
    return statistics.median(total), statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=300_000)
    args = parser.parse_args()
    codes = steps_code(args.rows)
    fork = fork_times(codes, args.repeats)
    print(f"{args.rows} rows, {len(codes)} steps, median of {args.repeats}")
    print(
        f"{'step':>5} {'fork probe':>11} {'replay+start':>13} {'replay':>9} "
        f"{'ratio (start)':>14} {'ratio':>7}"
    )
    for k in AT:
        with_start, replay = replay_times(codes, k, args.repeats)
        print(
            f"{k:>5} {fork[k]:>10.3f}s {with_start:>12.3f}s {replay:>8.3f}s "
            f"{with_start / fork[k]:>13.1f}x {replay / fork[k]:>6.1f}x"
        )


if __name__ == "__main__":
    main()
