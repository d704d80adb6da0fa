"""Per-cell wall time with lineage tracking on vs off, measured side by side.

Two kernels run the same workloads interleaved (off, on, off, on, ...), so a
noisy machine slows both alike. Prints the median per-cell time of each, the
ratio on/off and the wall time added per cell, and — measured directly, so not
blurred by the machine's noise — the median time the lineage bookkeeping itself
took per cell: in the kernel (both hooks) and on the host (decoding the report,
updating the graph).

    python benchmarks/lineage_overhead.py [--repeats 15] [--only "200 small"]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedResult, TrackedSession

WORKLOADS: dict[str, tuple[str, str]] = {
    "pandas 1e6 rows (assign + groupby)": (
        "import numpy as np, pandas as pd\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame({'k': rng.integers(0, 100, 1_000_000), 'a': rng.random(1_000_000)})",
        "df['c'] = df['a'] * 2\ng = df.groupby('k')['c'].mean()",
    ),
    "python loop 1e6 iterations": (
        "s = 0",
        "s = 0\nfor i in range(1_000_000):\n    s += i",
    ),
    "python loop 1e6, a branch taken 1 in 3": (
        "s = 0",
        "s = 0\nfor i in range(1_000_000):\n    if i % 3 == 0:\n        s += i",
    ),
    "200 small statements": (
        "x0 = 0",
        "\n".join(["x0 = 1", *(f"x{i} = x{i - 1} + 1" for i in range(1, 200))]),
    ),
    "wide frame, 200 columns, one rewritten": (
        "import numpy as np, pandas as pd\n"
        "wide = pd.DataFrame(np.random.default_rng(1).random((20_000, 200)),"
        " columns=[f'c{i}' for i in range(200)])\n"
        "col = 0",
        "col = (col + 1) % 200\nwide[f'c{col}'] = wide[f'c{col}'] * 1.0001",
    ),
    "wide frame, one constant column rewritten": (
        "",
        "wide['c17'] = wide['c17'] * 1.0001",
    ),
    "20 chained pandas operations, 1e5 rows": (
        "import numpy as np, pandas as pd\n"
        "rng = np.random.default_rng(2)\n"
        "n = 100_000\n"
        "sales = pd.DataFrame({'region': rng.choice(list('NSEW'), n), 'qty': rng.integers(1, 9, n),"
        " 'price': rng.random(n) * 10, 'note': rng.choice(['', 'x'], n)})\n"
        "regions = pd.DataFrame({'region': list('NSEW'), 'mgr': list('abcd')})",
        "sales['rev'] = sales['qty'] * sales['price']\n"
        "sales = sales.assign(tax=sales['rev'] * 0.2)\n"
        "n_rows = len(sales)\n"
        "by_region = sales.groupby('region')['rev'].sum()\n"
        "sizes = sales.groupby('region').size()\n"
        "named = sales.groupby('region').agg(total=('rev', 'sum'), units=('qty', 'sum'))\n"
        "big = sales[sales['qty'] > 4]['rev'].mean()\n"
        "q = sales.query('price > 5')['qty'].sum()\n"
        "top = sales.nlargest(5, 'rev')['region'].tolist()\n"
        "head = sales.sort_values('price').head(10)['qty']\n"
        "pv = sales.pivot_table(index='region', values='qty', aggfunc='sum')\n"
        "m = sales.merge(regions, on='region', how='left')\n"
        "mgr_rev = m.groupby('mgr')['rev'].sum()\n"
        "sel = sales.loc[sales['region'].isin(['N', 'E']), 'price'].sum()\n"
        "sales['flag'] = np.where(sales['qty'] > 4, 'big', 'small')\n"
        "share = sales['rev'] / sales.groupby('region')['rev'].transform('sum')\n"
        "by_flag = sales.groupby('flag')['qty'].mean()\n"
        "rows = sales.shape[0]\n"
        "res = {'n': len(sales), 'rev': by_region}\n"
        "agg = sales.agg({'qty': 'sum', 'price': 'mean'})",
    ),
    "50 variables touched": (
        "\n".join(f"v{i} = list(range(100))" for i in range(50)),
        "\n".join(f"v{i}.append({i})" for i in range(50))
        + "\ntotal = "
        + " + ".join(f"len(v{i})" for i in range(50)),
    ),
}


class _Recording(TrackedSession):
    """A tracked session that keeps its last result (for the direct measurements)."""

    last: TrackedResult

    def execute(self, code: str, timeout: float | None = None) -> TrackedResult:
        self.last = super().execute(code, timeout=timeout)
        return self.last


def _time(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    res = fn()
    elapsed = time.perf_counter() - t
    execution = getattr(res, "execution", res)
    if not execution.ok:
        raise SystemExit(f"workload failed: {execution.error}")
    return elapsed


def main() -> None:
    """Run every workload on a tracked and an untracked kernel and print ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument(
        "--only", default="", help="only the workloads whose name contains this (no fixed cost)"
    )
    args = ap.parse_args()
    off = KernelSession()
    on = _Recording(KernelSession())
    off.start()
    on.start()
    try:
        print(
            f"{'workload':40s} {'off ms':>9s} {'on ms':>9s} {'ratio':>7s} {'added ms':>9s}"
            f" {'kernel ms':>10s} {'host ms':>8s} {'direct ratio':>13s}"
        )
        for name, (setup, cell) in WORKLOADS.items():
            if args.only not in name:
                continue
            off.execute(setup, timeout=300)
            on.execute(setup, timeout=300)
            t_off, t_on, k_on, h_on = [], [], [], []
            for _ in range(args.repeats):
                t_off.append(_time(lambda c=cell: off.execute(c, timeout=300)))
                t_on.append(_time(lambda c=cell: on.execute(c, timeout=300)))
                k_on.append(on.last.kernel_seconds)
                h_on.append(on.last.host_seconds)
            m_off, m_on = statistics.median(t_off), statistics.median(t_on)
            k, h = statistics.median(k_on), statistics.median(h_on)
            print(
                f"{name:40s} {m_off * 1e3:9.2f} {m_on * 1e3:9.2f} {m_on / m_off:7.3f}"
                f" {(m_on - m_off) * 1e3:9.2f} {k * 1e3:10.2f} {h * 1e3:8.2f}"
                f" {(m_off + k + h) / m_off:13.3f}"
            )
        if args.only:
            return
        # about 300 live names of mixed kinds before measuring the fixed cost
        names = "\n".join(
            f"n{i} = {v}" for i, v in enumerate(["1", "[1, 2]", "{'a': 1}", "'text'", "2.5"] * 54)
        )
        off.execute(names)
        on.execute(names)
        n_live = on.execute("print(len([k for k in globals() if not k.startswith('_')]))")
        print(f"(live names now: {n_live.execution.stdout.strip()})")
        one_col = on.kernel.execute(
            "import time, zlib\nt = time.perf_counter()\n"
            "zlib.crc32(memoryview(np.ascontiguousarray(wide['c17'].to_numpy())).cast('B'))\n"
            "print((time.perf_counter() - t) * 1e3)",
            silent=False,
        )
        print(f"(hashing one wide-frame column in the kernel: {one_col.stdout.strip()} ms)")
        empty_off = [_time(lambda: off.execute("pass")) for _ in range(args.repeats)]
        empty_on = [_time(lambda: on.execute("pass")) for _ in range(args.repeats)]
        e_off, e_on = statistics.median(empty_off), statistics.median(empty_on)
        print(
            f"{'empty cell (fixed cost)':40s} {e_off * 1e3:9.2f} {e_on * 1e3:9.2f}"
            f" {e_on / e_off:7.3f} {(e_on - e_off) * 1e3:9.2f}"
        )
    finally:
        off.stop()
        on.stop()


if __name__ == "__main__":
    main()
