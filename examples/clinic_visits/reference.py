"""Reference solution of the clinic-visits task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the practice-fee and takings columns after the practice fee is revised. Specialty and
branch come from the vet register, joined on ``vet_id`` (visits of vets the register does
not list have no specialty or branch). Each cell ends with an expression whose value is
the turn's answer.

    python examples/clinic_visits/reference.py           # print the answers
    python examples/clinic_visits/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
seen = visits["visit_state"] == "completed"
visits["charge"] = visits["minutes"] * visits["rate_per_minute"]
visits["practice_fee"] = (visits["charge"] * PRACTICE_FEE_RATE).where(seen, 0.0)
visits["takings"] = visits["practice_fee"].where(seen, NO_SHOW_FEE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. visits and no-show visits
    """\
import pandas as pd
visits = pd.read_csv("data/visits.csv")
{"visits": len(visits), "no_shows": int((visits["visit_state"] == "no-show").sum())}
""",
    # 2. the clinic's total takings of 2025 (completed and no-show visits) at 10 %
    "PRACTICE_FEE_RATE = 0.10\nNO_SHOW_FEE = 4.50\n"
    + _RECOMPUTE
    + 'round(float(visits["takings"].sum()), 2)\n',
    # 3. specialty with the highest takings (the register gives the specialty)
    """\
vets = pd.read_csv("data/vets.csv")
visits = visits.merge(vets, on="vet_id", how="left", validate="many_to_one")
by_specialty = visits.groupby("specialty")["takings"].sum()
{"specialty": by_specialty.idxmax(), "takings": round(float(by_specialty.max()), 2)}
""",
    # 4. Northgate vets' share of the minutes of all completed visits (fee-free)
    """\
done = visits.loc[visits["visit_state"] == "completed", ["minutes", "branch"]]
northgate = done.loc[done["branch"] == "Northgate", "minutes"].sum()
round(float(100 * northgate / done["minutes"].sum()), 2)
""",
    # 5. the revision: practice fee 10 % -> 13 %
    "PRACTICE_FEE_RATE = 0.13\n" + _RECOMPUTE + 'round(float(visits["takings"].sum()), 2)\n',
    # 6. month with the highest takings under the current practice fee
    """\
by_month = visits.groupby(visits["visit_date"].str[:7])["takings"].sum()
{"month": by_month.idxmax(), "takings": round(float(by_month.max()), 2)}
""",
    # 7. vets whose total takings for the clinic are above 350 (current practice fee)
    """\
per_vet = visits.groupby("vet_id")["takings"].sum()
int((per_vet > 350).sum())
""",
    # 8. mean takings of a completed visit under the current practice fee
    'round(float(visits.loc[visits["visit_state"] == "completed", "takings"].mean()), 2)\n',
    # 9. what the revision adds to the takings from the Riverside vets (the register)
    """\
original = (visits["charge"] * 0.10).where(seen, NO_SHOW_FEE)
riverside = visits["branch"] == "Riverside"
round(float(visits.loc[riverside, "takings"].sum() - original[riverside].sum()), 2)
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
