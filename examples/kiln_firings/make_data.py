"""Generate ``data/kilns.csv`` and ``data/loads.csv`` for the kiln-firings example.

A ceramics cooperative fires its members' work in kilns spread over the workshops it
rents from a borough arts trust. ``kilns.csv`` is its kiln register (28 kilns with loads,
3 of them installed during the year and not yet entered); ``loads.csv`` holds every load
a member booked onto a kiln firing in 2025, some of which were pulled before the kiln
was lit. Deterministic: all chance comes from ``random.Random(SEED).random()``, a
sequence Python keeps stable across versions, and the csv module writes the rows, so
running the script again reproduces the shipped files byte for byte.

    python examples/kiln_firings/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20261215
N_LOADS = 2240
N_KILNS = 28
N_UNREGISTERED = 3
"""Kilns with loads that the register (kilns.csv) does not list yet."""
N_MEMBERS = 640
FEE_RISE_SHARE = 0.3
"""The share of kilns whose shelf fees go up once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

WORKSHOPS = (
    ("Canal Yard", 0.30),
    ("Foundry Lane", 0.26),
    ("Orchard Street", 0.24),
    ("Priory Mews", 0.20),
)
HEAT_SOURCES = (
    ("electric", 0.55),
    ("gas", 0.30),
    ("wood", 0.15),
)
STAGES = {
    "electric": (("bisque", 0.50), ("glaze", 0.45), ("raku", 0.05)),
    "gas": (("bisque", 0.25), ("glaze", 0.55), ("raku", 0.20)),
    "wood": (("bisque", 0.05), ("glaze", 0.80), ("raku", 0.15)),
}
"""How a kiln's loads split over the firing stages, by the kiln's heat source."""
BASE_FEE = {
    "electric": (5, 7),
    "gas": (7, 9),
    "wood": (10, 13),
}
"""The cheapest and dearest shelf fee for a bisque load on each kind of kiln, in whole
units; glaze and raku loads pay ``STAGE_EXTRA`` more a shelf."""
STAGE_EXTRA = {"bisque": 0, "glaze": 2, "raku": 5}
SHELVES = (("1", 0.38), ("2", 0.32), ("3", 0.17), ("4", 0.09), ("6", 0.04))
PIECES_PER_SHELF = (2, 9)
"""The fewest and most pieces a member stacks on one shelf."""
MONTHS = (1.10, 1.15, 1.20, 1.05, 0.95, 0.80, 0.60, 0.25, 1.00, 1.25, 1.45, 0.90)
"""How many firings fall in each month of 2025, relatively (the workshops close for
most of August, and members fire gifts before Christmas)."""
PULLED = (0.05, 0.05, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12, 0.05, 0.04, 0.04, 0.09)
"""The chance that a load booked for a firing in each month is pulled before it."""
CLOSED = (date(2025, 1, 1), date(2025, 12, 25), date(2025, 12, 26))
"""Days on which the workshops are shut and no kiln is fired."""
KILN_COLUMNS = ("kiln_code", "workshop", "heat_source")
LOAD_COLUMNS = (
    "load_no",
    "fire_date",
    "kiln_code",
    "member_no",
    "glaze_stage",
    "pieces",
    "shelves",
    "shelf_fee",
    "outcome",
)


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, drawn with the weight each carries last."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def _month(rng: random.Random) -> int:
    """A month of 2025 (1 to 12), drawn with the weights of ``MONTHS``."""
    x = rng.random() * sum(MONTHS)
    for k, weight in enumerate(MONTHS):
        x -= weight
        if x < 0:
            return k + 1
    return 12


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(kilns, loads): the register, and the loads in order of firing day, then kiln.

    Shelf fees are whole units, so a load's fee (shelves × shelf_fee) is whole, the
    shares the task takes of it (9 % or 12 %) and its flat charge (1.75) are whole cents,
    and every rounded total has one right value. A kiln keeps its fees, except that some
    kilns raise them by 1 a shelf from a day in the year onwards.
    """
    rng = random.Random(seed)
    kilns: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    for i in range(N_KILNS):
        source = _pick(rng, HEAT_SOURCES)
        kilns.append(
            {
                "kiln_code": f"K{31 + 3 * i + int(3 * rng.random()):03d}",
                "workshop": _pick(rng, WORKSHOPS),
                "heat_source": source,
            }
        )
        low, high = BASE_FEE[source]
        fee = low + int((high - low + 1) * rng.random())
        rises = rng.random() < FEE_RISE_SHARE
        since = date(2025, 2, 1) + timedelta(days=int(300 * rng.random()))
        profiles.append((source, fee, since if rises else date(2026, 1, 1)))
    # the day each kiln was first fired: the unregistered ones came in during the year
    in_use = [date(2025, 1, 1)] * (N_KILNS - N_UNREGISTERED) + [
        date(2025, 3, 1) + timedelta(days=int(150 * rng.random())) for _ in range(N_UNREGISTERED)
    ]
    popularity = [0.3 + 1.7 * rng.random() ** 1.5 for _ in kilns]
    loads: list[dict[str, object]] = []
    while len(loads) < N_LOADS:
        x = rng.random() * sum(popularity)
        k = 0
        while x >= popularity[k] and k < N_KILNS - 1:
            x -= popularity[k]
            k += 1
        month = _month(rng)
        first = date(2025, month, 1)
        after = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = first + timedelta(days=int((after - first).days * rng.random()))
        if day < in_use[k] or day in CLOSED:
            continue  # no firing on that kiln that day: draw the load again
        source, fee, since = profiles[k]
        stage = _pick(rng, STAGES[source])
        shelves = int(_pick(rng, SHELVES))
        low, high = PIECES_PER_SHELF
        pieces = sum(low + int((high - low + 1) * rng.random()) for _ in range(shelves))
        shelf_fee = fee + (1 if day >= since else 0) + STAGE_EXTRA[stage]
        loads.append(
            {
                "load_no": "",
                "fire_date": day.isoformat(),
                "kiln_code": kilns[k]["kiln_code"],
                "member_no": f"M{1001 + int(N_MEMBERS * rng.random() ** 1.6)}",
                "glaze_stage": stage,
                "pieces": pieces,
                "shelves": shelves,
                "shelf_fee": f"{shelf_fee:.2f}",
                "outcome": "pulled" if rng.random() < PULLED[month - 1] else "fired",
            }
        )
    loads.sort(key=lambda r: (str(r["fire_date"]), str(r["kiln_code"])))
    for k, row in enumerate(loads):
        row["load_no"] = f"LD{20001 + k}"
    registered = kilns[: N_KILNS - N_UNREGISTERED]
    return sorted(registered, key=lambda r: str(r["kiln_code"])), loads


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created if needed) and return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    kilns, loads = generate()
    paths = (out / "kilns.csv", out / "loads.csv")
    for path, columns, rows in zip(
        paths, (KILN_COLUMNS, LOAD_COLUMNS), (kilns, loads), strict=True
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
