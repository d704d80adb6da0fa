"""Reference solution of the bike-share task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the charge and payment columns after the street-space charge is revised. Borough and site
type come from the dock register, joined on ``dock_id`` (rides from docks the register
does not list have no borough or site type). Each cell ends with an expression whose
value is the turn's answer.

    python examples/bike_share/reference.py           # print the answers
    python examples/bike_share/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
docked = rides["ride_end"] == "docked"
rides["fare"] = rides["half_hours"] * rides["price_per_half_hour"]
rides["space_charge"] = (rides["fare"] * SPACE_CHARGE_RATE).where(docked, 0.0)
rides["payment"] = rides["space_charge"].where(docked, RECOVERY_FEE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. rides and abandoned rides
    """\
import pandas as pd
rides = pd.read_csv("data/rides.csv")
{"rides": len(rides), "abandoned": int((rides["ride_end"] == "abandoned").sum())}
""",
    # 2. the city's total payments for 2025 (docked and abandoned rides) at 9 %
    "SPACE_CHARGE_RATE = 0.09\nRECOVERY_FEE = 3.80\n"
    + _RECOMPUTE
    + 'round(float(rides["payment"].sum()), 2)\n',
    # 3. site type with the highest payments (the register gives the site type)
    """\
docks = pd.read_csv("data/docks.csv")
rides = rides.merge(docks, on="dock_id", how="left", validate="many_to_one")
by_site = rides.groupby("site_type")["payment"].sum()
{"site_type": by_site.idxmax(), "payments": round(float(by_site.max()), 2)}
""",
    # 4. Castlegate docks' share of all docked rides, by count (charge-free)
    """\
ended_docked = rides.loc[rides["ride_end"] == "docked", "borough"]
round(float(100 * (ended_docked == "Castlegate").sum() / len(ended_docked)), 2)
""",
    # 5. the revision: street-space charge 9 % -> 11 %
    "SPACE_CHARGE_RATE = 0.11\n" + _RECOMPUTE + 'round(float(rides["payment"].sum()), 2)\n',
    # 6. docks whose total payments to the city are above 60 (current charge)
    """\
per_dock = rides.groupby("dock_id")["payment"].sum()
int((per_dock > 60).sum())
""",
    # 7. month with the highest payments under the current charge
    """\
by_month = rides.groupby(rides["unlocked_on"].str[:7])["payment"].sum()
{"month": by_month.idxmax(), "payments": round(float(by_month.max()), 2)}
""",
    # 8. mean payment for a docked ride under the current charge
    'round(float(rides.loc[rides["ride_end"] == "docked", "payment"].mean()), 2)\n',
    # 9. what the revision adds to the payments for the Old Wharf docks (the register)
    """\
original = (rides["fare"] * 0.09).where(docked, RECOVERY_FEE)
old_wharf = rides["borough"] == "Old Wharf"
round(float(rides.loc[old_wharf, "payment"].sum() - original[old_wharf].sum()), 2)
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
