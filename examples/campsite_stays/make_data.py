"""Generate ``data/plots.csv`` and ``data/stays.csv`` for the campsite-stays example.

A campsite operator's register of the plots it lets on its campgrounds inside a national
park (38 plots, 4 of them laid out during the season and missing from the register file)
and the stays booked on them in 2025, some of whose guests never turned up. Deterministic:
the only randomness is ``random.Random(SEED).random()``, whose sequence Python keeps the
same across versions, and the files are written with the csv module, so a second run
gives the shipped files back byte for byte.

    python examples/campsite_stays/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20261208
N_STAYS = 2380
N_PLOTS = 38
N_UNLISTED = 4
"""Plots with stays that the register (plots.csv) leaves out."""
N_GUESTS = 1150
RAISE_RATE = 0.25
"""The share of plots whose night prices go up once in the course of the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

CAMPGROUNDS = (
    ("Heron Water", 0.27),
    ("Larch Hollow", 0.25),
    ("Sedge Fell", 0.24),
    ("Tarnside", 0.24),
)
SETTINGS = (
    ("Lakeshore", 0.24),
    ("Woodland", 0.30),
    ("Meadow", 0.28),
    ("Hardstanding", 0.18),
)
SHELTERS = {
    "Lakeshore": (("tent", 0.45), ("caravan", 0.30), ("campervan", 0.25)),
    "Woodland": (("tent", 0.65), ("caravan", 0.20), ("campervan", 0.15)),
    "Meadow": (("tent", 0.55), ("caravan", 0.25), ("campervan", 0.20)),
    "Hardstanding": (("tent", 0.10), ("caravan", 0.45), ("campervan", 0.45)),
}
"""How the shelters that stay on a plot of each setting are mixed."""
BASE_PRICE = {
    "Lakeshore": (18, 22),
    "Woodland": (14, 17),
    "Meadow": (12, 15),
    "Hardstanding": (15, 18),
}
"""The cheapest and dearest night for a tent on a plot of each setting, in whole units;
other shelters pay ``SHELTER_EXTRA`` on top."""
SHELTER_EXTRA = {"tent": 0, "caravan": 7, "campervan": 10}
PARTY = (("1", 0.12), ("2", 0.40), ("3", 0.16), ("4", 0.22), ("5", 0.06), ("6", 0.04))
NIGHTS = (
    ("1", 0.18),
    ("2", 0.27),
    ("3", 0.19),
    ("4", 0.11),
    ("5", 0.08),
    ("6", 0.05),
    ("7", 0.09),
    ("10", 0.02),
    ("14", 0.01),
)
MONTHS = (0.0, 0.0, 0.35, 0.90, 1.30, 1.60, 2.40, 2.55, 1.20, 0.85, 0.30, 0.15)
"""How many stays start in each month of 2025, relatively (closed in January and
February)."""
NO_SHOW = (0.0, 0.0, 0.10, 0.09, 0.07, 0.06, 0.04, 0.04, 0.07, 0.09, 0.12, 0.13)
"""The chance that the guests of a stay starting in each month never arrive."""
PLOT_COLUMNS = ("plot_id", "campground", "plot_setting")
STAY_COLUMNS = (
    "stay_no",
    "due_on",
    "plot_id",
    "guest_ref",
    "shelter",
    "party_size",
    "nights",
    "price_per_night",
    "attendance",
)


def _choose(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """Draw one option; the weight of each is its last element."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _month(rng: random.Random) -> int:
    """Draw a month of 2025 (1 to 12) by the weights in ``MONTHS``."""
    x = rng.random() * sum(MONTHS)
    for k, weight in enumerate(MONTHS):
        x -= weight
        if x < 0 and weight > 0:
            return k + 1
    return 12


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(plots, stays): the register, and the stays ordered by due day, then plot.

    Night prices are whole units, so a stay's takings (nights × price_per_night) are
    whole, the levies of the task (5 % or 7 % of the takings, or a flat 1.50) come to
    whole cents, and each rounded total is unambiguous. Each plot keeps its prices, but a
    quarter of the plots put them up by 1 from some day of the season onwards.
    """
    rng = random.Random(seed)
    plots: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    opening = date(2025, 3, 1)
    for i in range(N_PLOTS):
        setting = _choose(rng, SETTINGS)
        plots.append(
            {
                "plot_id": f"PL-{210 + 5 * i + int(5 * rng.random())}",
                "campground": _choose(rng, CAMPGROUNDS),
                "plot_setting": setting,
            }
        )
        low, high = BASE_PRICE[setting]
        price = low + int((high - low + 1) * rng.random())
        raised = rng.random() < RAISE_RATE
        since = opening + timedelta(days=40 + int(200 * rng.random()))
        profiles.append((setting, price, since if raised else date(2026, 1, 1)))
    demand = [0.4 + 1.6 * rng.random() ** 2 for _ in plots]
    stays: list[dict[str, object]] = []
    for _ in range(N_STAYS):
        x = rng.random() * sum(demand)
        k = 0
        while x >= demand[k] and k < len(plots) - 1:
            x -= demand[k]
            k += 1
        setting, price, since = profiles[k]
        month = _month(rng)
        start = date(2025, month, 1)
        end = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = start + timedelta(days=int((end - start).days * rng.random()))
        shelter = _choose(rng, SHELTERS[setting])
        night = price + (1 if day >= since else 0) + SHELTER_EXTRA[shelter]
        stays.append(
            {
                "stay_no": "",
                "due_on": day.isoformat(),
                "plot_id": plots[k]["plot_id"],
                "guest_ref": f"GR-{5001 + int(N_GUESTS * rng.random() ** 1.4)}",
                "shelter": shelter,
                "party_size": _choose(rng, PARTY),
                "nights": _choose(rng, NIGHTS),
                "price_per_night": f"{night:.2f}",
                "attendance": ("no-show" if rng.random() < NO_SHOW[month - 1] else "arrived"),
            }
        )
    stays.sort(key=lambda s: (str(s["due_on"]), str(s["plot_id"])))
    for k, row in enumerate(stays):
        row["stay_no"] = f"CS{7001 + k}"
    listed = plots[: N_PLOTS - N_UNLISTED]
    return sorted(listed, key=lambda p: str(p["plot_id"])), stays


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write the two CSVs into ``out`` (made if missing) and return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    plots, stays = generate()
    paths = (out / "plots.csv", out / "stays.csv")
    for path, columns, rows in zip(
        paths, (PLOT_COLUMNS, STAY_COLUMNS), (plots, stays), strict=True
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
