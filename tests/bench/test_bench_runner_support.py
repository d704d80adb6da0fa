"""Small benchmark suites written into a temporary folder for the runner tests."""

from __future__ import annotations

import json
from pathlib import Path

from stateguard.bench.records import RunConfig, RunStore, TurnResult

TINY_SESSION = '''# %%
import pandas as pd

# %%
"""
question: Build the orders table and call it orders.
validator:
  namespace_check:
    orders:
"""
orders = pd.DataFrame({
    "region": ["n", "s", "n", "e", "s", "n"],
    "price": ["$1.50", "$2.00", "$3.25", "$4.00", "$0.75", "$0.50"],
    "qty": [1, 2, 1, 3, 2, 4],
})

# %%
"""
question: Convert price to a number (drop the dollar sign), in place.
validator:
  namespace_check:
    orders:
"""
orders["price"] = orders["price"].str[1:].astype(float)

# %%
"""
question: What is the total revenue (price times quantity)?
"""
(orders["price"] * orders["qty"]).sum()

# %%
"""
question: How many orders come from region n with a price above 1?
"""
len(orders[(orders.region == "n") & (orders.price > 1)])

# %%
"""
question: What is the mean price per region, rounded to 2 decimals?
"""
orders.groupby("region")["price"].mean().round(2)

# %%
"""
question: This reference does not run.
"""
orders.no_such_method()
'''


def tiny_dseval_suite(root: Path, copies: int = 1) -> Path:
    """A DSEval-format suite of ``copies`` identical 6-turn sessions (turn 6 always fails)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "_manifest.yaml").write_text("name: tiny\n", encoding="utf-8")
    for n in range(copies):
        (root / f"0{n + 1}-tiny-orders.py").write_text(TINY_SESSION, encoding="utf-8")
    return root


def real_dseval_suite(root: Path, shared: Path, stem: str) -> Path:
    """One session of the shared DSEval exercise suite, with its inputs, in its own suite folder."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "_manifest.yaml").write_text("name: one\n", encoding="utf-8")
    (root / f"{stem}.py").write_text((shared / f"{stem}.py").read_text(encoding="utf-8"))
    (root / "_inputs").symlink_to(shared / "_inputs", target_is_directory=True)
    return root


def synthetic_run(run_dir: Path, rows: list[dict], **config) -> Path:
    """A run directory with hand-written turn results (no kernel)."""
    store = RunStore(run_dir)
    store.prepare(RunConfig(suite="longds", path="/nowhere", **config))
    for row in rows:
        store.append_turn(TurnResult(**{"n_turns": 4, "suite": "longds", **row}))
    return run_dir


def read_turns(run_dir: Path) -> list[dict]:
    """Every line of ``turns.jsonl`` (duplicates included)."""
    path = run_dir / "turns.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
