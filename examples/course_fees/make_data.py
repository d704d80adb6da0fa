"""Generate ``data/courses.csv`` and ``data/enrolments.csv`` for the course-fees example.

A college's course catalogue (40 courses, 4 of them new and not in the catalogue file
yet) and the enrolments of its students in the three terms of 2025. Deterministic: it
uses only ``random.Random(SEED).random()`` (whose sequence Python guarantees across
versions) and writes with the csv module, so re-running it reproduces the shipped files
byte for byte.

    python examples/course_fees/make_data.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

SEED = 20251202
N_STUDENTS = 320
N_COURSES = 40
N_UNLISTED = 4
"""Courses with enrolments that the catalogue (courses.csv) does not list."""
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"

DEPARTMENTS = (("Biology", 0.24), ("Chemistry", 0.18), ("History", 0.16))
DEPARTMENTS += (("Mathematics", 0.22), ("Economics", 0.20))
LEVELS = (("Introductory", 0.45), ("Advanced", 0.35), ("Graduate", 0.20))
CREDITS = {"Introductory": (3, 4), "Advanced": (4, 5), "Graduate": (5, 6)}
TERMS = (("Spring", 0.40), ("Summer", 0.15), ("Autumn", 0.45))
COURSE_COLUMNS = ("course_code", "department", "level")
ENROLMENT_COLUMNS = ("enrolment_id", "student_id", "course_code", "term", "credits")


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    """One option, chosen with the weight in its last position."""
    x = rng.random() * sum(o[-1] for o in options)
    for option in options:
        x -= option[-1]
        if x < 0:
            return option[0]
    return options[-1][0]


def generate(seed: int = SEED) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(courses, enrolments): the catalogue, and the enrolments sorted by term then id."""
    rng = random.Random(seed)
    courses: list[dict[str, object]] = []
    for i in range(N_COURSES):
        department = _pick(rng, DEPARTMENTS)
        courses.append(
            {
                "course_code": f"{department[:3].upper()}{101 + i}",
                "department": department,
                "level": _pick(rng, LEVELS),
            }
        )
    popularity = [0.5 + rng.random() for _ in courses]
    enrolments: list[dict[str, object]] = []
    order = {name: k for k, (name, _) in enumerate(TERMS)}
    for s in range(N_STUDENTS):
        taken: set[tuple[str, str]] = set()
        n = 2 + int(5 * rng.random())
        for _ in range(n):
            x = rng.random() * sum(popularity)
            k = 0
            while x >= popularity[k] and k < len(courses) - 1:
                x -= popularity[k]
                k += 1
            course = courses[k]
            term = _pick(rng, TERMS)
            if (str(course["course_code"]), term) in taken:
                continue
            taken.add((str(course["course_code"]), term))
            low, high = CREDITS[str(course["level"])]
            enrolments.append(
                {
                    "enrolment_id": 0,
                    "student_id": f"S{50001 + s}",
                    "course_code": course["course_code"],
                    "term": term,
                    "credits": low if rng.random() < 0.6 else high,
                }
            )
    enrolments.sort(key=lambda e: (order[str(e["term"])], str(e["student_id"])))
    for k, row in enumerate(enrolments):
        row["enrolment_id"] = f"E{900001 + k}"
    listed = courses[: N_COURSES - N_UNLISTED]
    return sorted(listed, key=lambda c: str(c["course_code"])), enrolments


def write(out: Path = DEFAULT_OUT) -> tuple[Path, Path]:
    """Write both CSVs into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    courses, enrolments = generate()
    paths = (out / "courses.csv", out / "enrolments.csv")
    for path, columns, rows in zip(
        paths, (COURSE_COLUMNS, ENROLMENT_COLUMNS), (courses, enrolments), strict=True
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
