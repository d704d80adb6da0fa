"""Generate ``data/events.csv`` and ``data/tickets.csv`` for the ticket-sales example.

A ticketing platform's event register (45 events of 2025, 4 of them added late and not in
the register file yet) and the tickets its buyers bought for them, some refunded.
Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it reproduces
the shipped files byte for byte.

    python examples/ticket_sales/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

SEED = 20251228
N_BUYERS = 600
N_EVENTS = 45
N_UNLISTED = 4
"""Events with tickets that the register (events.csv) does not list."""
REFUND_RATE = 0.14
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

CATEGORIES = (("Concert", 0.30), ("Theatre", 0.22), ("Comedy", 0.18))
CATEGORIES += (("Sports", 0.18), ("Festival", 0.12))
PRICES = {
    "Concert": (32.0, 140.0),
    "Theatre": (28.0, 95.0),
    "Comedy": (18.5, 45.0),
    "Sports": (25.0, 120.0),
    "Festival": (55.0, 140.0),
}
"""The lowest and highest ticket price of each category."""
CITIES = (("Bristol", 0.26), ("Leeds", 0.22), ("Glasgow", 0.20))
CITIES += (("Cardiff", 0.16), ("Belfast", 0.16))
EVENT_COLUMNS = ("event_id", "category", "city", "month")
TICKET_COLUMNS = ("ticket_id", "event_id", "buyer_id", "price", "status")


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _price(value: float) -> float:
    """``value`` rounded to 10 cents (so 8 % and 10 % of any sum of prices are whole cents
    or clear of a half cent, and every rounded total is unambiguous)."""
    return round(value * 10) / 10


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(events, tickets): the register, and the tickets sorted by event month then event."""
    rng = random.Random(seed)
    events: list[dict[str, object]] = []
    tiers: list[tuple[float, ...]] = []
    for i in range(N_EVENTS):
        category = _pick(rng, CATEGORIES)
        low, high = PRICES[category]
        events.append(
            {
                "event_id": f"EV{2001 + 3 * i + int(3 * rng.random())}",
                "category": category,
                "city": _pick(rng, CITIES),
                "month": f"2025-{1 + int(12 * rng.random()):02d}",
            }
        )
        base = low + (high - low) * 0.5 * rng.random()
        tiers.append(tuple(sorted({_price(min(high, base * f)) for f in (1.0, 1.35, 1.8)})))
    popularity = [0.4 + rng.random() for _ in events]
    tickets: list[dict[str, object]] = []
    for b in range(N_BUYERS):
        for _ in range(1 + int(2.5 * rng.random())):
            x = rng.random() * sum(popularity)
            k = 0
            while x >= popularity[k] and k < len(events) - 1:
                x -= popularity[k]
                k += 1
            price = tiers[k][int(len(tiers[k]) * rng.random())]
            for _ in range(1 + int(3 * rng.random())):
                tickets.append(
                    {
                        "ticket_id": "",
                        "event_id": events[k]["event_id"],
                        "buyer_id": f"B{40001 + b}",
                        "price": f"{price:.2f}",
                        "status": "refunded" if rng.random() < REFUND_RATE else "valid",
                    }
                )
    month = {e["event_id"]: e["month"] for e in events}
    tickets.sort(key=lambda t: (str(month[t["event_id"]]), str(t["event_id"])))
    for k, row in enumerate(tickets):
        row["ticket_id"] = f"T{700001 + k}"
    listed = events[: N_EVENTS - N_UNLISTED]
    return sorted(listed, key=lambda e: str(e["event_id"])), tickets


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    events, tickets = generate()
    paths = (out / "events.csv", out / "tickets.csv")
    for path, columns, rows in zip(
        paths, (EVENT_COLUMNS, TICKET_COLUMNS), (events, tickets), strict=True
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
