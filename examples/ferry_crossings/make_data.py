"""Generate ``data/routes.csv`` and ``data/bookings.csv`` for the ferry-crossings example.

A ferry operator's register of the routes it sails (36 routes, 3 of them opened during
the year and not in the register file yet) and the bookings made on them in 2025, some
of which were no-shows. Deterministic: it uses only ``random.Random(SEED).random()``
(whose sequence Python guarantees across versions) and writes with the csv module, so
re-running it reproduces the shipped files byte for byte.

    python examples/ferry_crossings/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260523
N_BOOKINGS = 2040
N_ROUTES = 36
N_UNLISTED = 3
"""Routes with bookings that the register (routes.csv) does not list."""
N_ACCOUNTS = 860
NO_SHOW_RATE = 0.08
RAISE_RATE = 0.35
"""The share of routes whose fares are raised once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

PORTS = (
    ("Greyhaven", 0.30),
    ("Saltmoor", 0.26),
    ("Eastquay", 0.24),
    ("Brannock", 0.20),
)
SERVICES = (
    ("Mainline", 0.36),
    ("Island link", 0.30),
    ("Fast craft", 0.20),
    ("Overnight", 0.14),
)
VEHICLES = {
    "Mainline": (("car", 0.46), ("van", 0.14), ("motorcycle", 0.06), ("none", 0.34)),
    "Island link": (("car", 0.40), ("van", 0.22), ("motorcycle", 0.05), ("none", 0.33)),
    "Fast craft": (("car", 0.22), ("motorcycle", 0.04), ("none", 0.74)),
    "Overnight": (("car", 0.50), ("van", 0.18), ("motorcycle", 0.07), ("none", 0.25)),
}
"""The vehicle booked on a crossing of each service ("none" for foot passengers)."""
PARTY = (("1", 0.30), ("2", 0.34), ("3", 0.14), ("4", 0.16), ("5", 0.06))
FARE_STEPS = {
    "Mainline": (6, 11),
    "Island link": (4, 8),
    "Fast craft": (9, 15),
    "Overnight": (14, 22),
}
"""The lowest and highest passenger fare of a route of each service, in whole units."""
VEHICLE_FACTOR = {"none": 0, "motorcycle": 2, "car": 4, "van": 6}
"""A vehicle's fare in multiples of the route's passenger fare (before any raise)."""
MONTHS = (0.55, 0.55, 0.70, 0.90, 1.05, 1.35, 1.70, 1.75, 1.15, 0.85, 0.60, 0.85)
"""The relative number of bookings sailing in each month of 2025."""
ROUTE_COLUMNS = ("route_code", "port", "service")
BOOKING_COLUMNS = (
    "booking_no",
    "sailing_date",
    "route_code",
    "account_no",
    "vehicle",
    "passengers",
    "vehicle_fare",
    "passenger_fare",
    "boarding",
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
    """(routes, bookings): the register, and the bookings sorted by sailing day then route.

    Fares are whole units, so every booking's fare (vehicle_fare + passengers ×
    passenger_fare) is a whole number, every amount of the task's dues model (5 % or 7 %
    of a fare, or a flat 2.20) a whole number of cents, and every rounded total is
    unambiguous. A route's fares are stable, but some routes have them raised once, from
    a day of the year on (the passenger fare by 1, a vehicle's fare by its factor).
    """
    rng = random.Random(seed)
    routes: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_ROUTES):
        service = _pick(rng, SERVICES)
        routes.append(
            {
                "route_code": f"RT-{120 + 4 * i + int(4 * rng.random())}",
                "port": _pick(rng, PORTS),
                "service": service,
            }
        )
        low, high = FARE_STEPS[service]
        fare = low + int((high - low + 1) * rng.random())
        raised = rng.random() < RAISE_RATE
        since = first + timedelta(days=30 + int(280 * rng.random()))
        profiles.append((service, fare, since if raised else date(2026, 1, 1)))
    volume = [0.3 + 1.7 * rng.random() ** 2 for _ in routes]
    bookings: list[dict[str, object]] = []
    for _ in range(N_BOOKINGS):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(routes) - 1:
            x -= volume[k]
            k += 1
        service, fare, since = profiles[k]
        month = _month(rng)
        start = date(2025, month, 1)
        end = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = start + timedelta(days=int((end - start).days * rng.random()))
        passenger_fare = fare + (1 if day >= since else 0)
        vehicle = _pick(rng, VEHICLES[service])
        bookings.append(
            {
                "booking_no": "",
                "sailing_date": day.isoformat(),
                "route_code": routes[k]["route_code"],
                "account_no": f"AC-{30001 + int(N_ACCOUNTS * rng.random() ** 1.4)}",
                "vehicle": vehicle,
                "passengers": _pick(rng, PARTY),
                "vehicle_fare": f"{VEHICLE_FACTOR[vehicle] * passenger_fare:.2f}",
                "passenger_fare": f"{passenger_fare:.2f}",
                "boarding": "no-show" if rng.random() < NO_SHOW_RATE else "boarded",
            }
        )
    bookings.sort(key=lambda b: (str(b["sailing_date"]), str(b["route_code"])))
    for k, row in enumerate(bookings):
        row["booking_no"] = f"FB{70001 + k}"
    listed = routes[: N_ROUTES - N_UNLISTED]
    return sorted(listed, key=lambda r: str(r["route_code"])), bookings


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    routes, bookings = generate()
    paths = (out / "routes.csv", out / "bookings.csv")
    for path, columns, rows in zip(
        paths, (ROUTE_COLUMNS, BOOKING_COLUMNS), (routes, bookings), strict=True
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
