"""Reference solution of the rental-fleet task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the levy and net columns after the levy revision. Area and branch type come from the
branch register, joined on ``branch_code`` (rentals of branches the register does not
list have no area or type). Each cell ends with an expression whose value is the turn's
answer.

    python examples/rental_fleet/reference.py           # print the answers
    python examples/rental_fleet/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
completed = rentals["outcome"] == "completed"
rentals["billed"] = (rentals["rental_days"] * rentals["daily_rate"] + CLEANING).where(
    completed, 0.0
)
rentals["levy"] = rentals["billed"] * LEVY_RATE
rentals["net"] = rentals["billed"] - rentals["levy"]
"""

TURN_CODE: tuple[str, ...] = (
    # 1. rentals and cancelled rentals
    """\
import pandas as pd
rentals = pd.read_csv("data/rentals.csv")
{"rentals": len(rentals), "cancelled": int((rentals["outcome"] == "cancelled").sum())}
""",
    # 2. total billed amount of the completed rentals (the levy does not enter it)
    "CLEANING = 15\nLEVY_RATE = 0.06\n" + _RECOMPUTE + 'round(float(rentals["billed"].sum()), 2)\n',
    # 3. area with the highest total net (the register gives the area)
    """\
branches = pd.read_csv("data/branches.csv")
rentals = rentals.merge(branches, on="branch_code", how="left", validate="many_to_one")
by_area = rentals.groupby("area")["net"].sum()
{"area": by_area.idxmax(), "net": round(float(by_area.max()), 2)}
""",
    # 4. Airport branches' share of the rental-days of all completed rentals (levy-free)
    """\
days = rentals.loc[rentals["outcome"] == "completed", ["rental_days", "branch_type"]]
airport = days.loc[days["branch_type"] == "Airport", "rental_days"].sum()
round(float(100 * airport / days["rental_days"].sum()), 2)
""",
    # 5. the revision: insurance levy 6 % -> 8 %
    "LEVY_RATE = 0.08\n" + _RECOMPUTE + 'round(float(rentals["levy"].sum()), 2)\n',
    # 6. customers with a total net above 1500 under the current levy
    """\
per_customer = rentals.groupby("customer_ref")["net"].sum()
int((per_customer > 1500).sum())
""",
    # 7. mean length of a completed rental picked up on a weekend (independent)
    """\
weekday = pd.to_datetime(rentals["start_date"]).dt.day_name()
weekend = (rentals["outcome"] == "completed") & weekday.isin(["Saturday", "Sunday"])
round(float(rentals.loc[weekend, "rental_days"].mean()), 2)
""",
    # 8. total net by branch type (the register and the revised levy)
    """\
by_type = rentals.groupby("branch_type")["net"].sum()
{kind: round(float(by_type[kind]), 2) for kind in ("Airport", "Downtown", "Suburban")}
""",
    # 9. net of the Lakes branches (the register and the revised levy)
    'round(float(rentals.loc[rentals["area"] == "Lakes", "net"].sum()), 2)\n',
)


def compute_answers(base: Path = HERE) -> list[Any]:
    """Run every turn's cell in one namespace, from ``base`` (which holds ``data/``)."""
    return run_cells(TURN_CODE, base)


def check(task_file: Path = HERE / "task.yaml") -> list[str]:
    """Mismatches between the computed answers and the gold answers of ``task_file``."""
    return mismatches(task_file, compute_answers())


if __name__ == "__main__":
    sys.exit(reference_main(__doc__ or "", compute_answers, check))
