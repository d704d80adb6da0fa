"""Differential check of lineage on everyday pandas: misses and needless alarms.

For each expression and each change to the data (a column rewritten, a column added,
rows dropped in place, a column of the merged frame rewritten), two kernels run the
same cells: a tracked one asks lineage whether ``v = <expression>`` is now stale, and
an untracked one recomputes the expression and compares it with ``v``.

* a **miss**: the value changed, lineage says fresh (a wrong "fresh": must be 0);
* a **needless alarm**: the value is the same, lineage says stale (conservative).

The expressions come in two sets: `dev`, the set the pandas read model was corrected
on, and `validation`, written before running it and never used to change the model.

    python benchmarks/lineage_pandas_oracle.py [--set dev|validation|both]
"""

from __future__ import annotations

import argparse

from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession

SETUP = (
    "import pandas as pd, numpy as np\n"
    "rng = np.random.default_rng(0)\n"
    "b = pd.DataFrame({'hotel': rng.choice(['A', 'B', 'C'], 50), "
    "'price': rng.integers(50, 200, 50), 'nights': rng.integers(1, 5, 50), "
    "'cancelled': rng.integers(0, 2, 50), 'note': ['x'] * 50})\n"
    "h = pd.DataFrame({'hotel': ['A', 'B', 'C'], 'stars': [3, 4, 5], 'city': ['p', 'q', 'r']})"
)

CHANGES = {
    "b['hotel'] rewritten": "b['hotel'] = b['hotel'].map({'A': 'B', 'B': 'C', 'C': 'A'})",
    "b['price'] rewritten": "b['price'] = b['price'][::-1].to_numpy()",
    "b['nights'] rewritten": "b['nights'] = b['nights'] + 1",
    "b['cancelled'] rewritten": "b['cancelled'] = 1 - b['cancelled']",
    "b['note'] rewritten": "b['note'] = 'y'",
    "b: a column added": "b['extra'] = 1",
    "b: rows dropped in place": "b.drop(index=[0, 1, 2], inplace=True)",
    "h['stars'] rewritten": "h['stars'] = [5, 1, 2]",
    "h['city'] rewritten": "h['city'] = ['r', 'r', 'p']",
    "h['hotel'] rewritten": "h['hotel'] = ['B', 'A', 'C']",
}

DEV = [
    "b.groupby('hotel').agg({'price': 'sum'})",
    "b.groupby('hotel')['price'].agg(['sum', 'mean'])",
    "(b['cancelled'] == 1).mean()",
    "b['hotel'].value_counts()",
    "b.loc[b.hotel == 'A'].shape[0]",
    "len(b[b.cancelled == 1])",
    "b.groupby('hotel').size().idxmax()",
    "b[['hotel', 'price']].groupby('hotel').sum()",
    "b.groupby('hotel', as_index=False)['price'].sum()",
    "b.query(\"hotel == 'A'\").shape[0]",
    "b.drop(columns=['note'])['price'].sum()",
    "b.groupby('hotel')['price'].sum().sort_values().index[0]",
    "b.pivot_table(index='hotel', columns='cancelled', values='price', aggfunc='mean')",
    "pd.merge(b, h, on='hotel')['stars'].mean()",
    "b.merge(h, on='hotel').groupby('city')['price'].sum()",
    "b[b['price'] > 100].groupby('hotel').size()",
    "b.groupby(['hotel', 'cancelled']).size().unstack()",
    "b['price'].where(b['cancelled'] == 0).sum()",
    "b.loc[:, 'price'].max()",
    "b.shape[0] - b['cancelled'].sum()",
    "b.sort_values(['hotel', 'price']).groupby('hotel').head(1)['price']",
    "b.groupby('hotel')['price'].apply(lambda s: s.max() - s.min())",
    "b.assign(rev=b.price * b.nights).groupby('hotel')['rev'].sum()",
    "b.set_index('hotel').loc['A', 'price']",
    "b.groupby('hotel').price.mean()",
    "b.price.mean()",
    "b[b.hotel.isin(['A', 'B'])].price.median()",
    "b.nlargest(3, 'price').hotel.tolist()",
    "b.dropna(subset=['price'])['price'].mean()",
    "b.drop_duplicates(subset=['hotel'])['hotel'].tolist()",
    "b.index.max()",
]

VALIDATION = [
    "b.groupby('hotel')['nights'].sum().max()",
    "b.loc[b['nights'] > 2, ['hotel', 'price']]",
    "b[(b.price > 80) & (b.cancelled == 0)]['nights'].sum()",
    "b.groupby('cancelled')['price'].describe()",
    "b.price.quantile(0.9)",
    "b.query('nights >= 2 and price < 150').hotel.nunique()",
    "b.assign(total=lambda d: d.price * d.nights)['total'].sum()",
    "b.sort_values('nights').tail(2).price.tolist()",
    "b.merge(h, on='hotel', how='inner')[['hotel', 'stars']].drop_duplicates()",
    "b.groupby('hotel').agg(avg_price=('price', 'mean'), stays=('nights', 'sum'))",
    "b.pivot_table(index='hotel', values=['price', 'nights'], aggfunc='mean')",
    "b['price'].groupby(b['hotel']).mean()",
    "b[b.cancelled.eq(1)].shape[0] / len(b)",
    "b.hotel.value_counts(normalize=True).round(3)",
    "b.set_index('hotel')['nights'].groupby(level=0).sum()",
    "b.groupby('hotel')['price'].transform('mean')",
    "b.drop(columns=['note']).groupby('hotel').max()",
    "b.nsmallest(2, 'nights')[['hotel', 'nights']]",
    "(b['price'] * b['nights']).groupby(b['hotel']).sum()",
    "b.iloc[:5]['price'].sum()",
    "b.head(10).groupby('hotel').size()",
    "pd.merge(b, h, on='hotel', how='left').groupby('stars')['price'].mean()",
    "b.groupby('hotel').filter(lambda g: len(g) > 10)['price'].mean()",
    "b.loc[b.price.idxmax(), 'hotel']",
    "b.select_dtypes('number').mean()",
    "b.to_dict('records')[0]",
    "b.columns.tolist()",
    "b.groupby('hotel')['cancelled'].mean().sort_values(ascending=False).head(1)",
]

_SAME = (
    "try:\n"
    "    _w = {e}\n"
    "    _same = bool(_w.equals(v)) if hasattr(_w, 'equals') else bool(_w == v)\n"
    "except Exception:\n"
    "    _same = False\n"
    "print(_same)"
)


def run(name: str, exprs: list[str]) -> tuple[int, int, int]:
    """(checks, misses, needless alarms) for one set; prints each miss."""
    tracked = TrackedSession(KernelSession())
    plain = KernelSession()
    tracked.start()
    plain.start()
    checks = misses = needless = 0
    try:
        for expr in exprs:
            for what, change in CHANGES.items():
                tracked.reset()
                tracked.execute(SETUP)
                first = tracked.execute(f"v = {expr}")
                if not first.execution.ok:
                    raise SystemExit(f"{expr!r} failed: {first.execution.error}")
                tracked.execute(change)
                res = tracked.execute("print(v)")
                stale = res.cell is not None and bool(res.cell.stale_reads)
                plain.execute("%reset -f")
                for code in (SETUP, f"v = {expr}", change):
                    plain.execute(code)
                same = plain.execute(_SAME.format(e=expr)).stdout.strip().endswith("True")
                checks += 1
                if not same and not stale:
                    misses += 1
                    print(f"  MISS [{name}] {expr}  | {what}")
                elif same and stale:
                    needless += 1
    finally:
        tracked.stop()
        plain.stop()
    return checks, misses, needless


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("dev", "validation", "both"), default="both")
    args = ap.parse_args()
    sets = {"dev": DEV, "validation": VALIDATION}
    chosen = sets if args.set == "both" else {args.set: sets[args.set]}
    print(f"{'set':12s} {'expressions':>11s} {'checks':>7s} {'misses':>7s} {'needless':>9s}")
    for name, exprs in chosen.items():
        checks, misses, needless = run(name, exprs)
        print(f"{name:12s} {len(exprs):11d} {checks:7d} {misses:7d} {needless:9d}")


if __name__ == "__main__":
    main()
