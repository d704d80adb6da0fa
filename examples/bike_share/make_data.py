"""Generate ``data/docks.csv`` and ``data/rides.csv`` for the bike-share example.

A city bike-share scheme's register of docking stations (40 docks, 3 of them put up
during the year and not in the register file yet) and the rides unlocked at them in 2025,
some of which ended with the bike abandoned away from any dock. Deterministic: it uses
only ``random.Random(SEED).random()`` (whose sequence Python guarantees across versions)
and writes with the csv module, so re-running it reproduces the shipped files byte for
byte.

    python examples/bike_share/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260614
N_RIDES = 2260
N_DOCKS = 40
N_UNLISTED = 3
"""Docks with rides that the register (docks.csv) does not list."""
N_RIDERS = 940
ABANDON_RATE = 0.06
RAISE_RATE = 0.30
"""The share of docks whose prices are raised once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

BOROUGHS = (
    ("Millbrook", 0.31),
    ("Hollins Cross", 0.25),
    ("Old Wharf", 0.24),
    ("Castlegate", 0.20),
)
SITE_TYPES = (
    ("Rail station", 0.28),
    ("High street", 0.32),
    ("Park", 0.22),
    ("Campus", 0.18),
)
E_BIKE_SHARE = {"Rail station": 0.42, "High street": 0.34, "Park": 0.22, "Campus": 0.30}
"""The share of the rides from a dock of each site type taken on an e-bike."""
HALF_HOURS = (("1", 0.40), ("2", 0.30), ("3", 0.14), ("4", 0.09), ("5", 0.04), ("6", 0.03))
PRICE_STEPS = {"Rail station": (3, 5), "High street": (2, 4), "Park": (2, 3), "Campus": (1, 3)}
"""The lowest and highest price per half hour of a classic bike at a dock of each site
type, in whole units; an e-bike costs ``E_BIKE_EXTRA`` more."""
E_BIKE_EXTRA = 2
MONTHS = (0.50, 0.55, 0.75, 0.95, 1.20, 1.45, 1.60, 1.55, 1.30, 0.95, 0.65, 0.55)
"""The relative number of rides unlocked in each month of 2025."""
DOCK_COLUMNS = ("dock_id", "borough", "site_type")
RIDE_COLUMNS = (
    "ride_ref",
    "unlocked_on",
    "dock_id",
    "rider_no",
    "bike_type",
    "half_hours",
    "price_per_half_hour",
    "ride_end",
)


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _month(rng: random.Random) -> int:
    """A month of 2025 (1 to 12), chosen with the weights of ``MONTHS``."""
    x = rng.random() * sum(MONTHS)
    for k, weight in enumerate(MONTHS):
        x -= weight
        if x < 0:
            return k + 1
    return 12


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(docks, rides): the register, and the rides sorted by day then dock.

    Prices are whole units, so every ride's fare (half_hours × price_per_half_hour) is a
    whole number, every amount of the task's charge model (9 % or 11 % of a fare, or a
    flat 3.80) a whole number of cents, and every rounded total is unambiguous. A dock's
    prices are stable, but some docks have them raised once, by 1, from a day of the
    year on.
    """
    rng = random.Random(seed)
    docks: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_DOCKS):
        site_type = _pick(rng, SITE_TYPES)
        docks.append(
            {
                "dock_id": f"DK-{402 + 5 * i + int(5 * rng.random())}",
                "borough": _pick(rng, BOROUGHS),
                "site_type": site_type,
            }
        )
        low, high = PRICE_STEPS[site_type]
        price = low + int((high - low + 1) * rng.random())
        raised = rng.random() < RAISE_RATE
        since = first + timedelta(days=40 + int(270 * rng.random()))
        profiles.append((site_type, price, since if raised else date(2026, 1, 1)))
    volume = [0.3 + 1.7 * rng.random() ** 2 for _ in docks]
    rides: list[dict[str, object]] = []
    for _ in range(N_RIDES):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(docks) - 1:
            x -= volume[k]
            k += 1
        site_type, price, since = profiles[k]
        month = _month(rng)
        start = date(2025, month, 1)
        end = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = start + timedelta(days=int((end - start).days * rng.random()))
        e_bike = rng.random() < E_BIKE_SHARE[site_type]
        price_now = price + (1 if day >= since else 0) + (E_BIKE_EXTRA if e_bike else 0)
        rides.append(
            {
                "ride_ref": "",
                "unlocked_on": day.isoformat(),
                "dock_id": docks[k]["dock_id"],
                "rider_no": f"RD-{5001 + int(N_RIDERS * rng.random() ** 1.3)}",
                "bike_type": "e-bike" if e_bike else "classic",
                "half_hours": _pick(rng, HALF_HOURS),
                "price_per_half_hour": f"{price_now:.2f}",
                "ride_end": "abandoned" if rng.random() < ABANDON_RATE else "docked",
            }
        )
    rides.sort(key=lambda r: (str(r["unlocked_on"]), str(r["dock_id"])))
    for k, row in enumerate(rides):
        row["ride_ref"] = f"BR{30001 + k}"
    listed = docks[: N_DOCKS - N_UNLISTED]
    return sorted(listed, key=lambda d: str(d["dock_id"])), rides


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    docks, rides = generate()
    paths = (out / "docks.csv", out / "rides.csv")
    for path, columns, rows in zip(
        paths, (DOCK_COLUMNS, RIDE_COLUMNS), (docks, rides), strict=True
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
