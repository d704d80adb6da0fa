"""Generate ``data/tutors.csv`` and ``data/sessions.csv`` for the tutoring-sessions example.

A tutoring platform's register of tutors (45 tutors, 3 of them joined late and not in the
register file yet) and the sessions booked with them through it in 2025, some cancelled.
Deterministic: it uses only ``random.Random(SEED).random()`` (whose sequence Python
guarantees across versions) and writes with the csv module, so re-running it reproduces
the shipped files byte for byte.

    python examples/tutoring_sessions/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260311
N_SESSIONS = 1700
N_TUTORS = 45
N_UNLISTED = 3
"""Tutors with sessions that the register (tutors.csv) does not list."""
N_STUDENTS = 520
CANCEL_RATE = 0.10
RAISE_RATE = 0.30
"""The share of tutors who raise their hourly rate once during the year."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

LEVELS = (("School", 0.36), ("University", 0.40), ("Professional", 0.24))
CITIES = (("Bristol", 0.32), ("Cardiff", 0.26), ("Bath", 0.20), ("Exeter", 0.22))
SUBJECTS = (
    ("Maths", 0.30),
    ("English", 0.18),
    ("Physics", 0.14),
    ("Chemistry", 0.12),
    ("Biology", 0.10),
    ("French", 0.08),
    ("Economics", 0.08),
)
HOURS = (("0.5", 0.08), ("1.0", 0.40), ("1.5", 0.25), ("2.0", 0.16), ("2.5", 0.07), ("3.0", 0.04))
RATES = {"School": (16, 30), "University": (26, 44), "Professional": (42, 72)}
"""The lowest and highest hourly rate of a tutor of each level (even whole units)."""
TUTOR_COLUMNS = ("tutor_id", "level", "city")
SESSION_COLUMNS = (
    "session_id",
    "booked_on",
    "tutor_id",
    "student_id",
    "hours",
    "subject",
    "hourly_rate",
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


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(tutors, sessions): the register, and the sessions sorted by date then tutor.

    Hours are whole halves and hourly rates even whole units, so every price
    (hours × hourly_rate) is a whole number, every amount of the task's fee model (12 % or
    15 % of a price, or a flat 3.00) a whole number of cents, and every rounded total is
    unambiguous. A tutor's hourly rate is stable, but some tutors raise it once, from a
    day of the year on.
    """
    rng = random.Random(seed)
    tutors: list[dict[str, object]] = []
    profiles: list[tuple[str, str, int, int, date]] = []
    first = date(2025, 1, 1)
    for i in range(N_TUTORS):
        level = _pick(rng, LEVELS)
        tutors.append(
            {
                "tutor_id": f"TU-{301 + 3 * i + int(3 * rng.random())}",
                "level": level,
                "city": _pick(rng, CITIES),
            }
        )
        low, high = RATES[level]
        rate = low + 2 * int((high - low) // 2 * rng.random() + 0.5)
        raised = 2 + 2 * int(2 * rng.random()) if rng.random() < RAISE_RATE else 0
        since = first + timedelta(days=60 + int(240 * rng.random()))
        main = _pick(rng, SUBJECTS)
        other = _pick(rng, SUBJECTS)
        profiles.append((main, other, rate, raised, since))
    volume = [0.2 + 1.8 * rng.random() ** 2 for _ in tutors]
    sessions: list[dict[str, object]] = []
    for _ in range(N_SESSIONS):
        x = rng.random() * sum(volume)
        k = 0
        while x >= volume[k] and k < len(tutors) - 1:
            x -= volume[k]
            k += 1
        main, other, rate, raised, since = profiles[k]
        day = first + timedelta(days=int(365 * rng.random()))
        sessions.append(
            {
                "session_id": "",
                "booked_on": day.isoformat(),
                "tutor_id": tutors[k]["tutor_id"],
                "student_id": f"ST-{1001 + int(N_STUDENTS * rng.random() ** 1.5)}",
                "hours": _pick(rng, HOURS),
                "subject": main if rng.random() < 0.75 else other,
                "hourly_rate": f"{rate + (raised if day >= since else 0):.2f}",
                "status": "cancelled" if rng.random() < CANCEL_RATE else "completed",
            }
        )
    sessions.sort(key=lambda t: (str(t["booked_on"]), str(t["tutor_id"])))
    for k, row in enumerate(sessions):
        row["session_id"] = f"TS{50001 + k}"
    listed = tutors[: N_TUTORS - N_UNLISTED]
    return sorted(listed, key=lambda t: str(t["tutor_id"])), sessions


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    tutors, sessions = generate()
    paths = (out / "tutors.csv", out / "sessions.csv")
    for path, columns, rows in zip(
        paths, (TUTOR_COLUMNS, SESSION_COLUMNS), (tutors, sessions), strict=True
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
