"""Generate ``data/orders.csv``: 1,200 orders of 2024 for the unit-economics example.

Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it
reproduces the shipped file byte for byte.

    python examples/unit_economics/make_data.py [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import random
from pathlib import Path

SEED = 20240501
N_ORDERS = 1200
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data" / "orders.csv"

REGIONS = (("North", 0.30), ("South", 0.22), ("East", 0.28), ("West", 0.20))
CHANNELS = (("Online", 0.50), ("Retail", 0.30), ("Partner", 0.20))
PRODUCTS = (
    ("Basic", 29.0, 0.40),
    ("Standard", 59.0, 0.30),
    ("Premium", 119.0, 0.20),
    ("Enterprise", 349.0, 0.10),
)
DISCOUNTS = {  # channel -> ((discount, weight), ...)
    "Online": ((0.0, 0.55), (0.05, 0.25), (0.10, 0.15), (0.20, 0.05)),
    "Retail": ((0.0, 0.70), (0.05, 0.20), (0.10, 0.10)),
    "Partner": ((0.05, 0.20), (0.10, 0.35), (0.15, 0.30), (0.20, 0.15)),
}
COLUMNS = (
    "order_id",
    "date",
    "customer_id",
    "region",
    "channel",
    "product",
    "units",
    "unit_price",
    "discount",
    "shipping_cost",
)


def _pick(rng: random.Random, options: tuple[tuple, ...]) -> tuple:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option
    return options[-1]


def _units(rng: random.Random, product: str) -> int:
    cap = 3 if product == "Enterprise" else 12
    n = 1
    while n < cap and rng.random() < 0.55:
        n += 1
    return n


def _shipping(rng: random.Random, channel: str, units: int) -> float:
    if channel == "Online":
        return round(6.0 + 10.0 * rng.random() + 0.6 * units, 2)
    if channel == "Retail":
        return round(1.5 + 3.0 * rng.random(), 2)
    return round(12.0 + 0.9 * units, 2)


def generate(n: int = N_ORDERS, seed: int = SEED) -> list[dict[str, object]]:
    """The order rows, sorted by date then order id."""
    rng = random.Random(seed)
    start = dt.date(2024, 1, 1)
    rows = []
    for i in range(n):
        day = start + dt.timedelta(days=int(rng.random() * 366))
        region = _pick(rng, REGIONS)[0]
        channel = _pick(rng, CHANNELS)[0]
        product, list_price, _ = _pick(rng, PRODUCTS)
        units = _units(rng, product)
        price = round(list_price * (0.97 + 0.06 * rng.random()), 2)
        discount = _pick(rng, DISCOUNTS[channel])[0]
        rows.append(
            {
                "order_id": 0,
                "date": day.isoformat(),
                "customer_id": f"C{1 + int(rng.random() * 400):04d}",
                "region": region,
                "channel": channel,
                "product": product,
                "units": units,
                "unit_price": f"{price:.2f}",
                "discount": f"{discount:.2f}",
                "shipping_cost": f"{_shipping(rng, channel, units):.2f}",
                "_i": i,
            }
        )
    rows.sort(key=lambda r: (r["date"], r["_i"]))
    for k, row in enumerate(rows):
        row["order_id"] = 100001 + k
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
