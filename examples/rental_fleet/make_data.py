"""Generate ``data/branches.csv`` and ``data/rentals.csv`` for the rental-fleet example.

A car rental company's branch register (23 branches, 3 of them opened late and not in the
register file yet) and the rentals its customers booked in 2025, some cancelled.
Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it reproduces
the shipped files byte for byte.

    python examples/rental_fleet/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260114
N_CUSTOMERS = 500
N_BRANCHES = 23
N_UNLISTED = 3
"""Branches with rentals that the register (branches.csv) does not list."""
CANCEL_RATE = 0.12
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

AREAS = (("Coastal", 0.28), ("Metro", 0.30), ("Lakes", 0.22), ("Uplands", 0.20))
BRANCH_TYPES = (("Airport", 0.26), ("Downtown", 0.40), ("Suburban", 0.34))
CAR_CLASSES = (("Economy", 0.34), ("Compact", 0.30), ("SUV", 0.22), ("Premium", 0.14))
RATES = {
    "Economy": (29.9, 49.9),
    "Compact": (39.9, 64.9),
    "SUV": (59.9, 94.9),
    "Premium": (79.9, 119.0),
}
"""The lowest and highest daily rate of each car class."""
BRANCH_COLUMNS = ("branch_code", "area", "branch_type")
RENTAL_COLUMNS = (
    "rental_id",
    "branch_code",
    "customer_ref",
    "start_date",
    "rental_days",
    "daily_rate",
    "outcome",
)


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _rate(value: float) -> float:
    """``value`` rounded to 10 cents (so 6 % and 8 % of any sum of billed amounts, and
    94 % and 92 % of it, fall clear of a half cent, and every rounded total is
    unambiguous)."""
    return round(value * 10) / 10


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(branches, rentals): the register, and the rentals sorted by start date then branch."""
    rng = random.Random(seed)
    branches: list[dict[str, object]] = []
    for i in range(N_BRANCHES):
        branches.append(
            {
                "branch_code": f"BR-{1 + 2 * i + int(2 * rng.random()):02d}",
                "area": _pick(rng, AREAS),
                "branch_type": _pick(rng, BRANCH_TYPES),
            }
        )
    popularity = [0.5 + rng.random() for _ in branches]
    first = date(2025, 1, 1)
    rentals: list[dict[str, object]] = []
    for c in range(N_CUSTOMERS):
        for _ in range(1 + int(5 * rng.random())):
            x = rng.random() * sum(popularity)
            k = 0
            while x >= popularity[k] and k < len(branches) - 1:
                x -= popularity[k]
                k += 1
            low, high = RATES[_pick(rng, CAR_CLASSES)]
            r = rng.random()
            rentals.append(
                {
                    "rental_id": "",
                    "branch_code": branches[k]["branch_code"],
                    "customer_ref": f"C{2001 + c}",
                    "start_date": (first + timedelta(days=int(365 * rng.random()))).isoformat(),
                    "rental_days": 1 + int(14 * r * r),
                    "daily_rate": f"{_rate(low + (high - low) * rng.random()):.2f}",
                    "outcome": "cancelled" if rng.random() < CANCEL_RATE else "completed",
                }
            )
    rentals.sort(key=lambda t: (str(t["start_date"]), str(t["branch_code"])))
    for k, row in enumerate(rentals):
        row["rental_id"] = f"R{30001 + k}"
    listed = branches[: N_BRANCHES - N_UNLISTED]
    return sorted(listed, key=lambda b: str(b["branch_code"])), rentals


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    branches, rentals = generate()
    paths = (out / "branches.csv", out / "rentals.csv")
    for path, columns, rows in zip(
        paths, (BRANCH_COLUMNS, RENTAL_COLUMNS), (branches, rentals), strict=True
    ):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    for path in write(parser.parse_args().out):
        print(path)
