"""Generate ``data/desks.csv`` and ``data/rentals.csv`` for the audio-guides example.

An audio-guide contractor's register of the rental desks it staffs in a city's museums
(36 desks, 4 of them opened during the year and not in the register file yet) and the
audio-guide rentals issued at them in 2025, some of which were refunded. Deterministic:
it uses only ``random.Random(SEED).random()`` (whose sequence Python guarantees across
versions) and writes with the csv module, so re-running it reproduces the shipped files
byte for byte.

    python examples/audio_guides/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260823
N_RENTALS = 2060
N_DESKS = 36
N_UNLISTED = 4
"""Desks with rentals that the register (desks.csv) does not list."""
N_TICKETS = 1900
RAISE_RATE = 0.30
"""The share of desks whose handset prices are raised once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

VENUES = (
    ("Fine Art Gallery", 0.30),
    ("Maritime Museum", 0.24),
    ("Natural History", 0.26),
    ("Old Town House", 0.20),
)
DESK_KINDS = (
    ("Entrance hall", 0.34),
    ("Ticket office", 0.26),
    ("Gallery kiosk", 0.22),
    ("Self-service", 0.18),
)
TOURS = {
    "Entrance hall": (("standard", 0.55), ("highlights", 0.25), ("family", 0.20)),
    "Ticket office": (("standard", 0.50), ("highlights", 0.20), ("family", 0.30)),
    "Gallery kiosk": (("standard", 0.30), ("highlights", 0.55), ("family", 0.15)),
    "Self-service": (("standard", 0.45), ("highlights", 0.45), ("family", 0.10)),
}
"""The tours rented at a desk of each kind."""
LANGUAGES = (
    ("English", 0.38),
    ("French", 0.14),
    ("German", 0.13),
    ("Spanish", 0.12),
    ("Italian", 0.08),
    ("Mandarin", 0.09),
    ("Japanese", 0.06),
)
HANDSETS = (("1", 0.40), ("2", 0.33), ("3", 0.12), ("4", 0.11), ("5", 0.04))
PRICE_STEPS = {
    "Entrance hall": (4, 6),
    "Ticket office": (4, 5),
    "Gallery kiosk": (3, 5),
    "Self-service": (3, 4),
}
"""The lowest and highest price of a standard-tour handset at a desk of each kind, in
whole units; the other tours cost ``TOUR_EXTRA`` more (or less)."""
TOUR_EXTRA = {"standard": 0, "highlights": -1, "family": 2}
MONTHS = (0.55, 0.60, 0.80, 1.15, 1.05, 1.00, 1.45, 1.60, 0.95, 0.90, 0.85, 1.10)
"""The relative number of rentals issued in each month of 2025."""
REFUNDED = (0.07, 0.07, 0.06, 0.08, 0.07, 0.06, 0.09, 0.10, 0.06, 0.05, 0.06, 0.08)
"""The chance that a rental of each month is refunded (a faulty or flat handset)."""
DESK_COLUMNS = ("desk_id", "venue", "desk_kind")
RENTAL_COLUMNS = (
    "rental_no",
    "issued_on",
    "desk_id",
    "ticket_ref",
    "tour",
    "language",
    "handsets",
    "handset_price",
    "rental_state",
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
    """(desks, rentals): the register, and the rentals sorted by day then desk.

    Prices are whole units, so every rental's takings (handsets × handset_price) are a
    whole number, every amount of the task's concession model (11 % or 14 % of the
    takings, or a flat 0.85) a whole number of cents, and every rounded total is
    unambiguous. A desk's prices are stable, but some desks have them raised once, by 1,
    from a day of the year on.
    """
    rng = random.Random(seed)
    desks: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_DESKS):
        kind = _pick(rng, DESK_KINDS)
        desks.append(
            {
                "desk_id": f"AD-{120 + 5 * i + int(5 * rng.random())}",
                "venue": _pick(rng, VENUES),
                "desk_kind": kind,
            }
        )
        low, high = PRICE_STEPS[kind]
        price = low + int((high - low + 1) * rng.random())
        raised = rng.random() < RAISE_RATE
        since = first + timedelta(days=45 + int(270 * rng.random()))
        profiles.append((kind, price, since if raised else date(2026, 1, 1)))
    volume = [0.3 + 1.7 * rng.random() ** 2 for _ in desks]
    rentals: list[dict[str, object]] = []
    for _ in range(N_RENTALS):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(desks) - 1:
            x -= volume[k]
            k += 1
        kind, price, since = profiles[k]
        month = _month(rng)
        start = date(2025, month, 1)
        end = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = start + timedelta(days=int((end - start).days * rng.random()))
        tour = _pick(rng, TOURS[kind])
        price_now = price + (1 if day >= since else 0) + TOUR_EXTRA[tour]
        rentals.append(
            {
                "rental_no": "",
                "issued_on": day.isoformat(),
                "desk_id": desks[k]["desk_id"],
                "ticket_ref": f"TK-{70001 + int(N_TICKETS * rng.random())}",
                "tour": tour,
                "language": _pick(rng, LANGUAGES),
                "handsets": _pick(rng, HANDSETS),
                "handset_price": f"{price_now:.2f}",
                "rental_state": ("refunded" if rng.random() < REFUNDED[month - 1] else "returned"),
            }
        )
    rentals.sort(key=lambda r: (str(r["issued_on"]), str(r["desk_id"])))
    for k, row in enumerate(rentals):
        row["rental_no"] = f"AG{8001 + k}"
    listed = desks[: N_DESKS - N_UNLISTED]
    return sorted(listed, key=lambda d: str(d["desk_id"])), rentals


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    desks, rentals = generate()
    paths = (out / "desks.csv", out / "rentals.csv")
    for path, columns, rows in zip(
        paths, (DESK_COLUMNS, RENTAL_COLUMNS), (desks, rentals), strict=True
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
