"""Reference solution of the ferry-crossings task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the levy and dues columns after the port levy is revised. Port and service come from the
route register, joined on ``route_code`` (bookings on routes the register does not list
have no port or service). Each cell ends with an expression whose value is the turn's
answer.

    python examples/ferry_crossings/reference.py           # print the answers
    python examples/ferry_crossings/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
boarded = bookings["boarding"] == "boarded"
bookings["fare"] = bookings["vehicle_fare"] + bookings["passengers"] * bookings["passenger_fare"]
bookings["levy"] = (bookings["fare"] * LEVY_RATE).where(boarded, 0.0)
bookings["dues"] = bookings["levy"].where(boarded, LANE_FEE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. bookings and no-shows
    """\
import pandas as pd
bookings = pd.read_csv("data/bookings.csv")
{"bookings": len(bookings), "no_shows": int((bookings["boarding"] == "no-show").sum())}
""",
    # 2. the harbour authorities' total dues of 2025 (boarded and no-show bookings) at 5 %
    "LEVY_RATE = 0.05\nLANE_FEE = 2.20\n"
    + _RECOMPUTE
    + 'round(float(bookings["dues"].sum()), 2)\n',
    # 3. service with the highest dues (the register gives the service)
    """\
routes = pd.read_csv("data/routes.csv")
bookings = bookings.merge(routes, on="route_code", how="left", validate="many_to_one")
by_service = bookings.groupby("service")["dues"].sum()
{"service": by_service.idxmax(), "dues": round(float(by_service.max()), 2)}
""",
    # 4. Eastquay routes' share of the fares of all boarded bookings (levy-free)
    """\
sailed = bookings.loc[bookings["boarding"] == "boarded", ["fare", "port"]]
eastquay = sailed.loc[sailed["port"] == "Eastquay", "fare"].sum()
round(float(100 * eastquay / sailed["fare"].sum()), 2)
""",
    # 5. the revision: port levy 5 % -> 7 %
    "LEVY_RATE = 0.07\n" + _RECOMPUTE + 'round(float(bookings["dues"].sum()), 2)\n',
    # 6. month with the highest dues under the current levy
    """\
by_month = bookings.groupby(bookings["sailing_date"].str[:7])["dues"].sum()
{"month": by_month.idxmax(), "dues": round(float(by_month.max()), 2)}
""",
    # 7. routes whose total dues to the harbour authorities are above 150 (current levy)
    """\
per_route = bookings.groupby("route_code")["dues"].sum()
int((per_route > 150).sum())
""",
    # 8. mean dues of a boarded booking under the current levy
    'round(float(bookings.loc[bookings["boarding"] == "boarded", "dues"].mean()), 2)\n',
    # 9. what the revision adds to the dues from the Greyhaven routes (the register)
    """\
original = (bookings["fare"] * 0.05).where(boarded, LANE_FEE)
greyhaven = bookings["port"] == "Greyhaven"
round(float(bookings.loc[greyhaven, "dues"].sum() - original[greyhaven].sum()), 2)
""",
)


def compute_answers(base: Path = HERE) -> list[Any]:
    """Run every turn's cell in one namespace, from ``base`` (which holds ``data/``)."""
    return run_cells(TURN_CODE, base)


def check(task_file: Path = HERE / "task.yaml") -> list[str]:
    """Mismatches between the computed answers and the gold answers of ``task_file``."""
    return mismatches(task_file, compute_answers())


if __name__ == "__main__":
    sys.exit(reference_main(__doc__ or "", compute_answers, check))
