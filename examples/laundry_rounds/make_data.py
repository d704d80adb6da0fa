"""Generate ``data/machines.csv`` and ``data/cycles.csv`` for the laundry-rounds example.

A laundromat chain's register of the machines it runs at its sites (42 machines, 3 of
them newly installed and not in the register file yet) and the wash and dry cycles run on
them in 2025, some of which were refunded. Deterministic: it uses only
``random.Random(SEED).random()`` (whose sequence Python guarantees across versions) and
writes with the csv module, so re-running it reproduces the shipped files byte for byte.

    python examples/laundry_rounds/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260419
N_CYCLES = 2150
N_MACHINES = 42
N_UNLISTED = 3
"""Machines with cycles that the register (machines.csv) does not list."""
N_CARDS = 720
REFUND_RATE = 0.07
RAISE_RATE = 0.30
"""The share of machines whose price per kg is raised once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

MACHINE_TYPES = (
    ("Washer", 0.40),
    ("Large washer", 0.18),
    ("Dryer", 0.32),
    ("Wash-and-dry", 0.10),
)
SITES = (
    ("Harbour Street", 0.30),
    ("Mill Lane", 0.26),
    ("Station Road", 0.24),
    ("Parkside", 0.20),
)
PROGRAMS = {
    "Washer": (
        ("Cotton 40", 0.34),
        ("Cotton 60", 0.20),
        ("Synthetics", 0.22),
        ("Quick 30", 0.16),
        ("Wool", 0.08),
    ),
    "Large washer": (("Duvet", 0.32), ("Cotton 60", 0.30), ("Cotton 40", 0.26), ("Wool", 0.12)),
    "Dryer": (("Dry hot", 0.48), ("Dry warm", 0.37), ("Dry delicate", 0.15)),
    "Wash-and-dry": (("Wash and dry", 0.75), ("Wash and dry eco", 0.25)),
}
LOADS = {
    "Washer": (("5", 0.30), ("7.5", 0.45), ("10", 0.25)),
    "Large washer": (("10", 0.25), ("12.5", 0.35), ("15", 0.25), ("17.5", 0.15)),
    "Dryer": (("5", 0.25), ("7.5", 0.35), ("10", 0.30), ("12.5", 0.10)),
    "Wash-and-dry": (("5", 0.40), ("7.5", 0.60)),
}
"""The kg billed for a cycle of each machine type, in steps of 2.5 kg."""
PRICE_STEPS = {"Washer": (2, 4), "Large washer": (3, 4), "Dryer": (2, 3), "Wash-and-dry": (5, 6)}
"""The lowest and highest price per kg of a machine of each type, in steps of 0.40."""
MACHINE_COLUMNS = ("machine_id", "site", "machine_type")
CYCLE_COLUMNS = (
    "cycle_id",
    "started_at",
    "machine_id",
    "card_id",
    "program",
    "kg_load",
    "price_per_kg",
    "cycle_state",
)


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(machines, cycles): the register, and the cycles sorted by start then machine.

    Loads are multiples of 2.5 kg and prices per kg multiples of 0.40, so every price
    (kg_load × price_per_kg) is a whole number, every amount of the task's model (12 % or
    15 % of a price, or a flat 1.50) a whole number of cents, and every rounded total is
    unambiguous. A machine's price per kg is stable, but some machines have it raised once,
    from a day of the year on. A cycle starts between 07:00 and 22:59.
    """
    rng = random.Random(seed)
    machines: list[dict[str, object]] = []
    profiles: list[tuple[str, int, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_MACHINES):
        kind = _pick(rng, MACHINE_TYPES)
        machines.append(
            {
                "machine_id": f"LM-{301 + 3 * i + int(3 * rng.random())}",
                "site": _pick(rng, SITES),
                "machine_type": kind,
            }
        )
        low, high = PRICE_STEPS[kind]
        steps = low + int((high - low + 1) * rng.random())
        raised = 1 if rng.random() < RAISE_RATE else 0
        since = first + timedelta(days=40 + int(260 * rng.random()))
        profiles.append((kind, steps, raised, since))
    volume = [0.3 + 1.7 * rng.random() ** 2 for _ in machines]
    cycles: list[dict[str, object]] = []
    for _ in range(N_CYCLES):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(machines) - 1:
            x -= volume[k]
            k += 1
        kind, steps, raised, since = profiles[k]
        day = first + timedelta(days=int(365 * rng.random()))
        minute = 7 * 60 + int(16 * 60 * rng.random())
        card = int(N_CARDS * rng.random() ** 1.3)
        price = 0.4 * (steps + (raised if day >= since else 0))
        cycles.append(
            {
                "cycle_id": "",
                "started_at": f"{day.isoformat()} {minute // 60:02d}:{minute % 60:02d}",
                "machine_id": machines[k]["machine_id"],
                "card_id": f"CARD-{50001 + card}",
                "program": _pick(rng, PROGRAMS[kind]),
                "kg_load": _pick(rng, LOADS[kind]),
                "price_per_kg": f"{price:.2f}",
                "cycle_state": "refunded" if rng.random() < REFUND_RATE else "paid",
            }
        )
    cycles.sort(key=lambda c: (str(c["started_at"]), str(c["machine_id"])))
    for k, row in enumerate(cycles):
        row["cycle_id"] = f"WC{40001 + k}"
    listed = machines[: N_MACHINES - N_UNLISTED]
    return sorted(listed, key=lambda m: str(m["machine_id"])), cycles


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    machines, cycles = generate()
    paths = (out / "machines.csv", out / "cycles.csv")
    for path, columns, rows in zip(
        paths, (MACHINE_COLUMNS, CYCLE_COLUMNS), (machines, cycles), strict=True
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
