"""Generate ``data/households.csv`` and ``data/readings.csv`` for the energy-bills example.

240 households of a regional supplier and their monthly meter readings of 2025 (a few
months missing, and a few readings from households the register does not list yet).
Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it reproduces
the shipped files byte for byte.

    python examples/energy_bills/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import calendar
import csv
import random
from pathlib import Path

SEED = 20251104
N_HOUSEHOLDS = 240
N_UNLISTED = 4
"""Households with readings that the register (households.csv) does not list."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

REGIONS = (("North", 0.30), ("South", 0.28), ("East", 0.22), ("West", 0.20))
TARIFFS = (("Fixed", 0.45), ("Flex", 0.30), ("Green", 0.25))
SEASON = (1.45, 1.35, 1.15, 0.95, 0.80, 0.70, 0.68, 0.72, 0.85, 1.05, 1.25, 1.40)
HOUSEHOLD_COLUMNS = ("household_id", "region", "tariff", "occupants")
READING_COLUMNS = ("reading_id", "household_id", "month", "days", "kwh")


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _occupants(rng: random.Random) -> int:
    n = 1
    while n < 6 and rng.random() < 0.55:
        n += 1
    return n


def generate(
    n: int = N_HOUSEHOLDS, seed: int = SEED
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(households, readings): the register, and the readings sorted by month then id."""
    rng = random.Random(seed)
    households: list[dict[str, object]] = []
    readings: list[dict[str, object]] = []
    for i in range(n + N_UNLISTED):
        household = {
            "household_id": f"H{1001 + i}",
            "region": _pick(rng, REGIONS),
            "tariff": _pick(rng, TARIFFS),
            "occupants": _occupants(rng),
        }
        if i < n:
            households.append(household)
        base = 95 + 55 * int(household["occupants"]) + 60 * rng.random()
        if household["tariff"] == "Green":
            base *= 0.92
        for month in range(1, 13):
            if rng.random() < 0.03:
                continue  # no reading this month
            kwh = base * SEASON[month - 1] * (0.85 + 0.30 * rng.random())
            readings.append(
                {
                    "reading_id": 0,
                    "household_id": household["household_id"],
                    "month": f"2025-{month:02d}",
                    "days": calendar.monthrange(2025, month)[1],
                    "kwh": f"{kwh:.2f}",
                }
            )
    readings.sort(key=lambda r: (str(r["month"]), str(r["household_id"])))
    for k, row in enumerate(readings):
        row["reading_id"] = f"R{700001 + k}"
    return households, readings


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    households, readings = generate()
    paths = (out / "households.csv", out / "readings.csv")
    for path, columns, rows in zip(
        paths, (HOUSEHOLD_COLUMNS, READING_COLUMNS), (households, readings), strict=True
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
