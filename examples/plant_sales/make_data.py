"""Generate ``data/pitches.csv`` and ``data/sales.csv`` for the plant-sales example.

A greenhouse grower's register of the market pitches it sells plant trays from (35
pitches, 4 of them taken during the year and not in the register file yet) and the tray
sales made at them in 2025, some of which were brought back for a refund. Deterministic:
it uses only ``random.Random(SEED).random()`` (whose sequence Python guarantees across
versions) and writes with the csv module, so re-running it reproduces the shipped files
byte for byte.

    python examples/plant_sales/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260917
N_SALES = 2090
N_PITCHES = 35
N_UNLISTED = 4
"""Pitches with sales that the register (pitches.csv) does not list."""
N_BUYERS = 960
RAISE_RATE = 0.30
"""The share of pitches whose tray prices are raised once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

TOWNS = (
    ("Ashcombe", 0.28),
    ("Bramley Cross", 0.26),
    ("Cold Norton", 0.24),
    ("Dunmere", 0.22),
)
LAYOUTS = (
    ("Covered hall", 0.30),
    ("Open square", 0.30),
    ("Car park", 0.22),
    ("Roadside", 0.18),
)
GROUPS = {
    "Covered hall": (("bedding", 0.40), ("perennial", 0.40), ("herbs", 0.20)),
    "Open square": (("bedding", 0.50), ("perennial", 0.25), ("herbs", 0.25)),
    "Car park": (("bedding", 0.55), ("perennial", 0.30), ("herbs", 0.15)),
    "Roadside": (("bedding", 0.35), ("perennial", 0.20), ("herbs", 0.45)),
}
"""The plant groups sold at a pitch of each layout."""
POT_SIZES = (("9 cm", 0.45), ("1 litre", 0.35), ("2 litre", 0.20))
TRAYS = (("1", 0.36), ("2", 0.30), ("3", 0.15), ("4", 0.10), ("5", 0.05), ("6", 0.04))
PRICE_STEPS = {
    "Covered hall": (10, 13),
    "Open square": (9, 12),
    "Car park": (8, 10),
    "Roadside": (7, 9),
}
"""The lowest and highest price of a bedding tray at a pitch of each layout, in whole
units; the other plant groups cost ``GROUP_EXTRA`` more (or less)."""
GROUP_EXTRA = {"bedding": 0, "perennial": 4, "herbs": -2}
MONTHS = (0.20, 0.30, 0.90, 1.75, 2.00, 1.45, 0.95, 0.80, 0.85, 0.60, 0.35, 0.45)
"""The relative number of sales made in each month of 2025."""
RETURNED = (0.05, 0.05, 0.06, 0.07, 0.08, 0.09, 0.11, 0.10, 0.07, 0.06, 0.05, 0.05)
"""The chance that a sale of each month is brought back (wilted or diseased plants)."""
PITCH_COLUMNS = ("pitch_id", "market_town", "pitch_layout")
SALE_COLUMNS = (
    "sale_no",
    "sold_on",
    "pitch_id",
    "buyer_ref",
    "plant_group",
    "pot_size",
    "trays",
    "tray_price",
    "settlement",
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
    """(pitches, sales): the register, and the sales sorted by day then pitch.

    Prices are whole units, so every sale's takings (trays × tray_price) are a whole
    number, every amount of the task's commission model (6 % or 8 % of the takings, or a
    flat 1.20) a whole number of cents, and every rounded total is unambiguous. A
    pitch's prices are stable, but some pitches have them raised once, by 1, from a day
    of the year on.
    """
    rng = random.Random(seed)
    pitches: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_PITCHES):
        layout = _pick(rng, LAYOUTS)
        pitches.append(
            {
                "pitch_id": f"MP-{340 + 6 * i + int(6 * rng.random())}",
                "market_town": _pick(rng, TOWNS),
                "pitch_layout": layout,
            }
        )
        low, high = PRICE_STEPS[layout]
        price = low + int((high - low + 1) * rng.random())
        raised = rng.random() < RAISE_RATE
        since = first + timedelta(days=50 + int(260 * rng.random()))
        profiles.append((layout, price, since if raised else date(2026, 1, 1)))
    volume = [0.3 + 1.7 * rng.random() ** 2 for _ in pitches]
    sales: list[dict[str, object]] = []
    for _ in range(N_SALES):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(pitches) - 1:
            x -= volume[k]
            k += 1
        layout, price, since = profiles[k]
        month = _month(rng)
        start = date(2025, month, 1)
        end = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = start + timedelta(days=int((end - start).days * rng.random()))
        group = _pick(rng, GROUPS[layout])
        price_now = price + (1 if day >= since else 0) + GROUP_EXTRA[group]
        sales.append(
            {
                "sale_no": "",
                "sold_on": day.isoformat(),
                "pitch_id": pitches[k]["pitch_id"],
                "buyer_ref": f"BY-{4001 + int(N_BUYERS * rng.random() ** 1.3)}",
                "plant_group": group,
                "pot_size": _pick(rng, POT_SIZES),
                "trays": _pick(rng, TRAYS),
                "tray_price": f"{price_now:.2f}",
                "settlement": ("returned" if rng.random() < RETURNED[month - 1] else "paid"),
            }
        )
    sales.sort(key=lambda s: (str(s["sold_on"]), str(s["pitch_id"])))
    for k, row in enumerate(sales):
        row["sale_no"] = f"GS{3001 + k}"
    listed = pitches[: N_PITCHES - N_UNLISTED]
    return sorted(listed, key=lambda p: str(p["pitch_id"])), sales


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    pitches, sales = generate()
    paths = (out / "pitches.csv", out / "sales.csv")
    for path, columns, rows in zip(
        paths, (PITCH_COLUMNS, SALE_COLUMNS), (pitches, sales), strict=True
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
