"""Generate ``data/shipments.csv``: 900 parcel shipments of 2025 for the freight example.

Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it
reproduces the shipped file byte for byte.

    python examples/freight_margin/make_data.py [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import random
from pathlib import Path

SEED = 20250317
N_SHIPMENTS = 900
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data" / "shipments.csv"

DEPOTS = (("Leeds", 0.32), ("Bristol", 0.26), ("Glasgow", 0.24), ("Norwich", 0.18))
SEGMENTS = (("Retail", 0.45), ("Wholesale", 0.35), ("Marketplace", 0.20))
SERVICES = (  # service, rate per kg, weight
    ("Economy", 0.85, 0.45),
    ("Standard", 1.25, 0.35),
    ("Express", 2.10, 0.20),
)
HANDLING = {"Retail": 2.50, "Wholesale": 1.20, "Marketplace": 3.75}
COLUMNS = (
    "shipment_id",
    "pickup_date",
    "depot",
    "segment",
    "service",
    "parcels",
    "weight_kg",
    "rate_per_kg",
    "handling_fee",
    "carrier_cost",
)


def _pick(rng: random.Random, options: tuple[tuple, ...]) -> tuple:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option
    return options[-1]


def _parcels(rng: random.Random, segment: str) -> int:
    cap = 20 if segment == "Wholesale" else 6
    n = 1
    while n < cap and rng.random() < (0.7 if segment == "Wholesale" else 0.4):
        n += 1
    return n


def generate(n: int = N_SHIPMENTS, seed: int = SEED) -> list[dict[str, object]]:
    """The shipment rows, sorted by pickup date then shipment id."""
    rng = random.Random(seed)
    start = dt.date(2025, 1, 1)
    rows = []
    for i in range(n):
        day = start + dt.timedelta(days=int(rng.random() * 365))
        depot = _pick(rng, DEPOTS)[0]
        segment = _pick(rng, SEGMENTS)[0]
        service, rate, _ = _pick(rng, SERVICES)
        parcels = _parcels(rng, segment)
        weight = round(parcels * (0.4 + 7.6 * rng.random()), 2)
        rate = round(rate * (0.95 + 0.10 * rng.random()), 3)
        base = weight * rate
        # the carrier charges about the base, more for small and express loads
        carrier = base * (0.80 + 0.30 * rng.random()) + (1.5 if service == "Express" else 0.6)
        rows.append(
            {
                "shipment_id": 0,
                "pickup_date": day.isoformat(),
                "depot": depot,
                "segment": segment,
                "service": service,
                "parcels": parcels,
                "weight_kg": f"{weight:.2f}",
                "rate_per_kg": f"{rate:.3f}",
                "handling_fee": f"{HANDLING[segment]:.2f}",
                "carrier_cost": f"{carrier:.2f}",
                "_i": i,
            }
        )
    rows.sort(key=lambda r: (r["pickup_date"], r["_i"]))
    for k, row in enumerate(rows):
        row["shipment_id"] = f"SH{50001 + k}"
        del row["_i"]
    return rows


def write(path: Path = DEFAULT_OUT) -> Path:
    """Write the CSV to ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(generate())
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    print(write(parser.parse_args().out))
