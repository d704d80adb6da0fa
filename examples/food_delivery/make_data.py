"""Generate ``data/restaurants.csv`` and ``data/orders.csv`` for the food-delivery example.

A delivery platform's restaurant register (26 restaurants, 3 of them opened late and not
in the register file yet) and the orders its customers placed with them in 2025, some
refunded. Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence
Python guarantees across versions) and writes with the csv module, so re-running it
reproduces the shipped files byte for byte.

    python examples/food_delivery/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260203
N_CUSTOMERS = 450
N_RESTAURANTS = 26
N_UNLISTED = 3
"""Restaurants with orders that the register (restaurants.csv) does not list."""
REFUND_RATE = 0.10
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

CUISINES = (("Pizza", 0.34), ("Burgers", 0.26), ("Curry", 0.22), ("Sushi", 0.18))
DISTRICTS = (("Harbour", 0.30), ("Old Town", 0.26), ("Riverside", 0.24), ("Hillcrest", 0.20))
BASKETS = {
    "Pizza": (14.0, 42.0),
    "Burgers": (12.0, 38.0),
    "Curry": (16.0, 48.0),
    "Sushi": (22.0, 75.0),
}
"""The lowest and highest basket value of an order at each cuisine."""
RESTAURANT_COLUMNS = ("restaurant_id", "cuisine", "district")
ORDER_COLUMNS = (
    "order_ref",
    "restaurant_id",
    "customer_ref",
    "placed_on",
    "basket_value",
    "distance_km",
    "status",
)


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _basket(value: float) -> float:
    """``value`` rounded to 20 cents (so 15 % and 18 % of any sum of basket values, and
    85 % and 82 % of it, fall clear of a half cent, and every rounded total is
    unambiguous)."""
    return round(value * 5) / 5


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(restaurants, orders): the register, and the orders sorted by date then restaurant."""
    rng = random.Random(seed)
    restaurants: list[dict[str, object]] = []
    for i in range(N_RESTAURANTS):
        restaurants.append(
            {
                "restaurant_id": f"RS-{101 + 2 * i + int(2 * rng.random())}",
                "cuisine": _pick(rng, CUISINES),
                "district": _pick(rng, DISTRICTS),
            }
        )
    popularity = [0.5 + rng.random() for _ in restaurants]
    first = date(2025, 1, 1)
    orders: list[dict[str, object]] = []
    for c in range(N_CUSTOMERS):
        for _ in range(1 + int(6 * rng.random())):
            x = rng.random() * sum(popularity)
            k = 0
            while x >= popularity[k] and k < len(restaurants) - 1:
                x -= popularity[k]
                k += 1
            low, high = BASKETS[str(restaurants[k]["cuisine"])]
            r = rng.random()
            orders.append(
                {
                    "order_ref": "",
                    "restaurant_id": restaurants[k]["restaurant_id"],
                    "customer_ref": f"CU{3001 + c}",
                    "placed_on": (first + timedelta(days=int(365 * rng.random()))).isoformat(),
                    "basket_value": f"{_basket(low + (high - low) * rng.random()):.2f}",
                    "distance_km": f"{0.5 + round(75 * r * r) / 10:.1f}",
                    "status": "refunded" if rng.random() < REFUND_RATE else "delivered",
                }
            )
    orders.sort(key=lambda t: (str(t["placed_on"]), str(t["restaurant_id"])))
    for k, row in enumerate(orders):
        row["order_ref"] = f"D{50001 + k}"
    listed = restaurants[: N_RESTAURANTS - N_UNLISTED]
    return sorted(listed, key=lambda r: str(r["restaurant_id"])), orders


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    restaurants, orders = generate()
    paths = (out / "restaurants.csv", out / "orders.csv")
    for path, columns, rows in zip(
        paths, (RESTAURANT_COLUMNS, ORDER_COLUMNS), (restaurants, orders), strict=True
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
