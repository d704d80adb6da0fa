"""Generate ``data/outposts.csv`` and ``data/hires.csv`` for the paddle-hire example.

A river hire company's register of launch outposts (34 outposts, 3 of them opened during
the year and not in the register file yet) and the kayak, canoe and paddleboard hires
launched from them in 2025, some of which were called off for high water or storms.
Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it reproduces
the shipped files byte for byte.

    python examples/paddle_hire/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260709
N_HIRES = 2120
N_OUTPOSTS = 34
N_UNLISTED = 3
"""Outposts with hires that the register (outposts.csv) does not list."""
N_CUSTOMERS = 820
RAISE_RATE = 0.30
"""The share of outposts whose hourly rates are raised once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

REACHES = (
    ("Harrow Weir", 0.30),
    ("Stonebridge", 0.26),
    ("Lockside", 0.24),
    ("Marsh End", 0.20),
)
LAUNCHES = (
    ("Slipway", 0.30),
    ("Pontoon", 0.30),
    ("Beach", 0.22),
    ("Jetty", 0.18),
)
CRAFT = {
    "Slipway": (("kayak", 0.50), ("canoe", 0.35), ("paddleboard", 0.15)),
    "Pontoon": (("kayak", 0.40), ("canoe", 0.45), ("paddleboard", 0.15)),
    "Beach": (("kayak", 0.30), ("canoe", 0.15), ("paddleboard", 0.55)),
    "Jetty": (("kayak", 0.45), ("canoe", 0.40), ("paddleboard", 0.15)),
}
"""The craft hired at an outpost of each launch type."""
HOURS = (("1", 0.28), ("2", 0.32), ("3", 0.18), ("4", 0.12), ("5", 0.06), ("6", 0.04))
RATE_STEPS = {"Slipway": (6, 9), "Pontoon": (7, 10), "Beach": (5, 8), "Jetty": (8, 11)}
"""The lowest and highest hourly rate of a kayak at an outpost of each launch type, in
whole units; the other craft cost ``CRAFT_EXTRA`` more (or less)."""
CRAFT_EXTRA = {"kayak": 0, "canoe": 3, "paddleboard": -1}
MONTHS = (0.25, 0.30, 0.55, 0.85, 1.20, 1.60, 1.95, 1.90, 1.20, 0.70, 0.35, 0.25)
"""The relative number of hires launched in each month of 2025."""
CALLED_OFF = (0.16, 0.14, 0.11, 0.08, 0.06, 0.05, 0.05, 0.06, 0.07, 0.10, 0.13, 0.16)
"""The chance that a hire of each month is called off."""
OUTPOST_COLUMNS = ("outpost_id", "river_reach", "launch_type")
HIRE_COLUMNS = (
    "hire_no",
    "launched_on",
    "outpost_id",
    "customer_ref",
    "craft",
    "hours",
    "hourly_rate",
    "hire_status",
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
    """(outposts, hires): the register, and the hires sorted by day then outpost.

    Rates are whole units, so every hire's charge (hours × hourly_rate) is a whole
    number, every amount of the task's levy model (7 % or 9 % of a charge, or a flat
    1.60) a whole number of cents, and every rounded total is unambiguous. An outpost's
    rates are stable, but some outposts have them raised once, by 1, from a day of the
    year on.
    """
    rng = random.Random(seed)
    outposts: list[dict[str, object]] = []
    profiles: list[tuple[str, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_OUTPOSTS):
        launch = _pick(rng, LAUNCHES)
        outposts.append(
            {
                "outpost_id": f"OP-{610 + 7 * i + int(7 * rng.random())}",
                "river_reach": _pick(rng, REACHES),
                "launch_type": launch,
            }
        )
        low, high = RATE_STEPS[launch]
        rate = low + int((high - low + 1) * rng.random())
        raised = rng.random() < RAISE_RATE
        since = first + timedelta(days=60 + int(240 * rng.random()))
        profiles.append((launch, rate, since if raised else date(2026, 1, 1)))
    volume = [0.3 + 1.7 * rng.random() ** 2 for _ in outposts]
    hires: list[dict[str, object]] = []
    for _ in range(N_HIRES):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(outposts) - 1:
            x -= volume[k]
            k += 1
        launch, rate, since = profiles[k]
        month = _month(rng)
        start = date(2025, month, 1)
        end = date(2025, month + 1, 1) if month < 12 else date(2026, 1, 1)
        day = start + timedelta(days=int((end - start).days * rng.random()))
        craft = _pick(rng, CRAFT[launch])
        rate_now = rate + (1 if day >= since else 0) + CRAFT_EXTRA[craft]
        hires.append(
            {
                "hire_no": "",
                "launched_on": day.isoformat(),
                "outpost_id": outposts[k]["outpost_id"],
                "customer_ref": f"CU-{2001 + int(N_CUSTOMERS * rng.random() ** 1.5)}",
                "craft": craft,
                "hours": _pick(rng, HOURS),
                "hourly_rate": f"{rate_now:.2f}",
                "hire_status": (
                    "called-off" if rng.random() < CALLED_OFF[month - 1] else "completed"
                ),
            }
        )
    hires.sort(key=lambda h: (str(h["launched_on"]), str(h["outpost_id"])))
    for k, row in enumerate(hires):
        row["hire_no"] = f"PH{5001 + k}"
    listed = outposts[: N_OUTPOSTS - N_UNLISTED]
    return sorted(listed, key=lambda o: str(o["outpost_id"])), hires


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    outposts, hires = generate()
    paths = (out / "outposts.csv", out / "hires.csv")
    for path, columns, rows in zip(
        paths, (OUTPOST_COLUMNS, HIRE_COLUMNS), (outposts, hires), strict=True
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
