"""Grading is linear time: every grader timed at size n and 10n, side by side.

Each row grades one answer (or compares one result) of n characters (or items),
then of 10n, with the gold fixed. The ratio is ~10 for a linear grader and ~100 for
a quadratic one. Caches and a busy machine bend raw ratios, so each row also shows
the ratio of a plain linear pass over the same input (``lower``, ``split``, a regex
``findall``), timed in the same run, and the quotient of the two: ~1 for a linear
grader, ~10 for a quadratic one. A row whose quotient exceeds ``--max-growth``
(default 3) is timed again one size up (10n and 100n): number-dense answers cross a
CPU-cache boundary between 3,200 and 32,000 characters, which alone bends the quotient
to ~4, and a busy machine adds noise; quadratic code grows ~10x again, linear code does
not. A row still above the bound at 10n/100n is marked and the script exits 1; so is a
grader that raises. Sizes are timed in alternating rounds (best of ``--rounds``). The answers
include adversarial shapes (unclosed brackets, digit and separator runs, repeated
keys) next to ordinary prose. The garbage collector is paused while timing: its cost
depends on whatever else the process holds, not on the grader.

    python benchmarks/grading_scaling.py             # n = 3,200 characters (10n = 32,000)
    python benchmarks/grading_scaling.py --n 32000
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from stateguard.bench.judges.infiagent import judge_infiagent
from stateguard.bench.judges.kramabench import judge_kramabench
from stateguard.bench.judges.longds import judge_longds
from stateguard.bench.judges.matching import compare_objects
from stateguard.worker.grading import grade, numbers_in
from stateguard.worker.grounding import unseen_numbers

Text = Callable[[int], str]


def _fill(unit: str) -> Text:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


ANSWERS: dict[str, Text] = {
    "prose": _fill("The total revenue was computed from the orders table. "),
    "numbers": _fill("12.5 7 -3e2 45% 1,234 "),
    "digits": _fill("1"),
    "separators": _fill("1,"),
    "dots": _fill("1."),
    "open braces": _fill("{"),
    "key: value": _fill("total: "),
    "@name[": _fill("@x["),
    "whitespace": _fill(" \t"),
}

GRADERS: dict[str, Callable[[str], Any]] = {
    "grade number": lambda a: grade(a, 1234.5),
    "grade text": lambda a: grade(a, "north region"),
    "grade bool": lambda a: grade(a, True),
    "grade mapping": lambda a: grade(a, {"total": 12.5, "region": "north", "share": 0.4}),
    "numbers_in": numbers_in,
    "grounding check": lambda a: unseen_numbers(a, ["the table has 12.5 and 7 and 1,234"]),
    "infiagent": lambda a: judge_infiagent({"mean": "12.5", "n": "7"}, a),
    "longds object": lambda a: judge_longds({"n_orders": 12, "top": "north"}, a),
    "longds text": lambda a: judge_longds("north", a),
    "kramabench string": lambda a: judge_kramabench("string_approximate", "north region", a),
    "kramabench number": lambda a: judge_kramabench("numeric_approximate", 12.5, a),
    "kramabench list": lambda a: judge_kramabench("list_approximate", ["north", "south"], a),
}

RESULTS: dict[str, Callable[[int], tuple[Any, Any]]] = {
    "dseval list": lambda n: (list(range(n)), list(range(n))),
    "dseval array": lambda n: (np.arange(n, dtype=float), np.arange(n, dtype=float)),
    "dseval frame": lambda n: (
        pd.DataFrame({"a": np.arange(n), "b": np.arange(n) * 0.5}),
        pd.DataFrame({"a": np.arange(n), "b": np.arange(n) * 0.5}),
    ),
    "dseval dict": lambda n: ({str(i): i for i in range(n)}, {str(i): i for i in range(n)}),
}


def _seconds(fn: Callable[[], Any], min_time: float = 0.02) -> float:
    """Best per-call time over repeated calls (at least ``min_time`` in total)."""
    best, spent, calls = float("inf"), 0.0, 0
    gc.collect()
    gc.disable()
    try:
        while spent < min_time or calls < 2:
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            best, spent, calls = min(best, dt), spent + dt, calls + 1
    finally:
        gc.enable()
    return best


def _pair(small: Callable[[], Any], large: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Best times of ``small`` and ``large``, timed in alternating rounds."""
    a = b = float("inf")
    for _ in range(rounds):
        a, b = min(a, _seconds(small)), min(b, _seconds(large))
    return a, b


def _baseline(answer: str) -> Any:
    """A plain linear pass over the answer."""
    return answer.lower(), answer.split(), re.findall(r"\d+|\w+", answer)


def _baseline_result(ref: Any, sub: Any) -> Any:
    """A plain linear pass over a result: its items as text."""
    return [str(x) for x in (ref.to_numpy().ravel() if hasattr(ref, "to_numpy") else ref)]


def _growth(
    run: Callable[[int], Callable[[], Any]],
    base: Callable[[int], Callable[[], Any]],
    n: int,
    rounds: int,
    small: float | None = None,
    large: float | None = None,
) -> tuple[float, float, float]:
    """(growth over the linear pass, the grader's ratio, the pass's ratio) from n to 10n."""
    if small is None or large is None:
        small, large = _pair(run(n), run(10 * n), rounds)
    base_small, base_large = _pair(base(n), base(10 * n), rounds)
    linear = base_large / max(base_small, 1e-9)
    ratio = large / max(small, 1e-9)
    return ratio / linear, ratio, linear


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3200, help="Size n (characters or items).")
    parser.add_argument("--max-growth", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3, help="Alternating timing rounds.")
    args = parser.parse_args()
    n = args.n
    print(f"grading time at n={n:,} and 10n={10 * n:,} (best of repeated calls)")
    print(
        f"{'grader':<18} {'input':<13} {'n':>9} {'10n':>10} {'ratio':>6} "
        f"{'linear pass':>11} {'growth':>6}"
    )
    Build = Callable[[int], Callable[[], Any]]
    rows: list[tuple[str, str, Build, Build]] = []
    for gname, grader in GRADERS.items():
        for aname, text in ANSWERS.items():

            def run(k: int, g: Any = grader, t: Text = text) -> Callable[[], Any]:
                answer = t(k)
                return lambda: g(answer)

            def base(k: int, t: Text = text) -> Callable[[], Any]:
                answer = t(k)
                return lambda: _baseline(answer)

            rows.append((gname, aname, run, base))
    for rname, make in RESULTS.items():

        def compare(k: int, make: Callable[[int], tuple[Any, Any]] = make) -> Callable[[], Any]:
            ref, sub = make(k)
            return lambda: compare_objects(ref, sub)

        def items(k: int, make: Callable[[int], tuple[Any, Any]] = make) -> Callable[[], Any]:
            ref, sub = make(k)
            return lambda: _baseline_result(ref, sub)

        rows.append((rname, "equal values", compare, items))
    worst, failed = 0.0, 0
    for gname, aname, run, base in rows:
        try:
            small, large = _pair(run(n), run(10 * n), args.rounds)
        except Exception as exc:  # a grader must not raise on any answer
            failed += 1
            print(f"{gname:<18} {aname:<13} raised {type(exc).__name__}: {str(exc)[:60]}")
            continue
        growth, ratio, linear = _growth(run, base, n, args.rounds, small, large)
        note = ""
        if growth > args.max_growth:  # one size up: a cache step or noise, or quadratic?
            again, _, _ = _growth(run, base, 10 * n, args.rounds)
            note = f"  10n->100n: {again:.2f}"
            growth = again
            if again > args.max_growth:
                note += "  <-- superlinear"
        worst = max(worst, growth)
        print(
            f"{gname:<18} {aname:<13} {small * 1e3:>7.3f}ms {large * 1e3:>8.3f}ms "
            f"{ratio:>5.1f}x {linear:>10.1f}x {ratio / linear:>6.2f}{note}"
        )
    print(
        f"worst growth over a linear pass (after rechecks): {worst:.2f} "
        "(linear ~1, quadratic ~10); "
        f"graders that raised: {failed}"
    )
    return 0 if worst <= args.max_growth and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
