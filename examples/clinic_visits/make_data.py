"""Generate ``data/vets.csv`` and ``data/visits.csv`` for the clinic-visits example.

A veterinary clinic's register of the vets who see patients there (43 vets, 3 of them
locums not in the register file yet) and the visits booked with them in 2025, some of
which the pet's owner missed. Deterministic: it uses only ``random.Random(SEED).random()``
(whose sequence Python guarantees across versions) and writes with the csv module, so
re-running it reproduces the shipped files byte for byte.

    python examples/clinic_visits/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260402
N_VISITS = 1850
N_VETS = 43
N_UNLISTED = 3
"""Vets with visits that the register (vets.csv) does not list."""
N_PETS = 640
NO_SHOW_RATE = 0.09
RAISE_RATE = 0.35
"""The share of vets who raise their rate per minute once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

SPECIALTIES = (
    ("General practice", 0.42),
    ("Dentistry", 0.18),
    ("Dermatology", 0.16),
    ("Surgery", 0.24),
)
BRANCHES = (("Hillcrest", 0.30), ("Riverside", 0.28), ("Northgate", 0.24), ("Eastfield", 0.18))
SPECIES = (
    ("Dog", 0.46),
    ("Cat", 0.36),
    ("Rabbit", 0.08),
    ("Guinea pig", 0.04),
    ("Bird", 0.03),
    ("Reptile", 0.03),
)
MINUTES = (("10", 0.10), ("15", 0.26), ("20", 0.24), ("30", 0.22), ("45", 0.12), ("60", 0.06))
RATES = {
    "General practice": (4, 7),
    "Dentistry": (6, 9),
    "Dermatology": (6, 10),
    "Surgery": (9, 14),
}
"""The lowest and highest rate per minute of a vet of each specialty, in steps of 0.20."""
VET_COLUMNS = ("vet_id", "specialty", "branch")
VISIT_COLUMNS = (
    "visit_id",
    "visit_date",
    "vet_id",
    "pet_id",
    "species",
    "minutes",
    "rate_per_minute",
    "visit_state",
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
    """(vets, visits): the register, and the visits sorted by date then vet.

    Minutes are multiples of 5 and rates per minute multiples of 0.20, so every charge
    (minutes × rate_per_minute) is a whole number, every amount of the task's fee model
    (10 % or 13 % of a charge, or a flat 4.50) a whole number of cents, and every rounded
    total is unambiguous. A vet's rate per minute is stable, but some vets raise it once,
    from a day of the year on. A pet always has the same species.
    """
    rng = random.Random(seed)
    vets: list[dict[str, object]] = []
    profiles: list[tuple[int, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_VETS):
        specialty = _pick(rng, SPECIALTIES)
        vets.append(
            {
                "vet_id": f"VT-{110 + 4 * i + int(4 * rng.random())}",
                "specialty": specialty,
                "branch": _pick(rng, BRANCHES),
            }
        )
        low, high = RATES[specialty]
        steps = low + int((high - low + 1) * rng.random())
        raised = 1 + int(2 * rng.random()) if rng.random() < RAISE_RATE else 0
        since = first + timedelta(days=45 + int(250 * rng.random()))
        profiles.append((steps, raised, since))
    species = [_pick(rng, SPECIES) for _ in range(N_PETS)]
    volume = [0.25 + 1.75 * rng.random() ** 2 for _ in vets]
    visits: list[dict[str, object]] = []
    for _ in range(N_VISITS):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(vets) - 1:
            x -= volume[k]
            k += 1
        steps, raised, since = profiles[k]
        day = first + timedelta(days=int(365 * rng.random()))
        pet = int(N_PETS * rng.random() ** 1.4)
        rate = 0.2 * (steps + (raised if day >= since else 0))
        visits.append(
            {
                "visit_id": "",
                "visit_date": day.isoformat(),
                "vet_id": vets[k]["vet_id"],
                "pet_id": f"PET-{4001 + pet}",
                "species": species[pet],
                "minutes": _pick(rng, MINUTES),
                "rate_per_minute": f"{rate:.2f}",
                "visit_state": "no-show" if rng.random() < NO_SHOW_RATE else "completed",
            }
        )
    visits.sort(key=lambda v: (str(v["visit_date"]), str(v["vet_id"])))
    for k, row in enumerate(visits):
        row["visit_id"] = f"CV{70001 + k}"
    listed = vets[: N_VETS - N_UNLISTED]
    return sorted(listed, key=lambda v: str(v["vet_id"])), visits


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    vets, visits = generate()
    paths = (out / "vets.csv", out / "visits.csv")
    for path, columns, rows in zip(
        paths, (VET_COLUMNS, VISIT_COLUMNS), (vets, visits), strict=True
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
