"""What the bubblewrap sandbox costs: kernel start and a trivial cell, sandboxed vs not.

Starts alternate between an unconfined and a sandboxed kernel (off, on, off, on, ...),
so a noisy machine slows both alike; cells run interleaved on one kernel of each.
Prints medians side by side, the ratio sandboxed/unconfined and the time added.
Exits with status 2 where bubblewrap is not available.

    python benchmarks/sandbox_overhead.py [--starts 10] [--cells 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from stateguard.errors import KernelError
from stateguard.kernel import KernelSession, SandboxPolicy

CELLS = {
    "trivial cell (1 + 1)": "1 + 1",
    "print a line": "print('x')",
    "touch a file in the workdir": "open('f.txt', 'w').write('x')",
}


def _start_seconds(policy: SandboxPolicy) -> float:
    session = KernelSession(sandbox=policy)
    try:
        started = time.perf_counter()
        session.start()
        return time.perf_counter() - started
    finally:
        session.stop()


def _row(label: str, off: list[float], on: list[float], unit: float, suffix: str) -> str:
    m_off, m_on = statistics.median(off) * unit, statistics.median(on) * unit
    return (
        f"{label:<36} {m_off:>10.2f}{suffix} {m_on:>10.2f}{suffix} "
        f"{m_on / m_off:>7.2f}x {m_on - m_off:>+9.2f}{suffix}"
    )


def main() -> int:
    """Measure and print; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10, help="kernel starts per mode")
    parser.add_argument("--cells", type=int, default=200, help="executions per cell and mode")
    args = parser.parse_args()
    off, on = SandboxPolicy(mode="off"), SandboxPolicy(mode="required")
    try:
        probe = KernelSession(sandbox=on)
    except KernelError as exc:
        print(f"cannot measure: {exc}", file=sys.stderr)
        return 2
    print(f"sandbox: {probe.confinement.describe()}")
    probe.stop()

    starts: dict[str, list[float]] = {"off": [], "on": []}
    _start_seconds(off), _start_seconds(on)  # warm the page cache for both
    for _ in range(args.starts):
        starts["off"].append(_start_seconds(off))
        starts["on"].append(_start_seconds(on))

    cells: dict[str, dict[str, list[float]]] = {name: {"off": [], "on": []} for name in CELLS}
    with KernelSession(sandbox=off) as k_off, KernelSession(sandbox=on) as k_on:
        kernels = {"off": k_off, "on": k_on}
        for code in CELLS.values():  # warm-up
            for k in kernels.values():
                k.execute(code)
        for _ in range(args.cells):
            for name, code in CELLS.items():
                for mode, k in kernels.items():
                    started = time.perf_counter()
                    res = k.execute(code)
                    cells[name][mode].append(time.perf_counter() - started)
                    assert res.ok, res.error

    header = f"{'':<36} {'unconfined':>12} {'sandboxed':>12} {'ratio':>8} {'added':>11}"
    print(header)
    print(
        _row(
            f"kernel start (n={args.starts})",
            starts["off"],
            starts["on"],
            1000.0,
            "ms",
        )
    )
    for name, times in cells.items():
        print(_row(f"{name} (n={args.cells})", times["off"], times["on"], 1000.0, "ms"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
