"""Reference solution of the tutoring-sessions task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the commission and earning columns after the commission revision. Level and city come
from the tutor register, joined on ``tutor_id`` (sessions of tutors the register does not
list have no level or city). Each cell ends with an expression whose value is the turn's
answer.

    python examples/tutoring_sessions/reference.py           # print the answers
    python examples/tutoring_sessions/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
completed = sessions["status"] == "completed"
sessions["price"] = sessions["hours"] * sessions["hourly_rate"]
sessions["commission"] = (sessions["price"] * COMMISSION_RATE).where(completed, 0.0)
sessions["earning"] = sessions["commission"].where(completed, CANCELLATION_FEE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. sessions and cancelled sessions
    """\
import pandas as pd
sessions = pd.read_csv("data/sessions.csv")
{"sessions": len(sessions), "cancelled": int((sessions["status"] == "cancelled").sum())}
""",
    # 2. the platform's total earnings of 2025 (completed and cancelled) at 12 %
    "COMMISSION_RATE = 0.12\nCANCELLATION_FEE = 3.00\n"
    + _RECOMPUTE
    + 'round(float(sessions["earning"].sum()), 2)\n',
    # 3. level with the highest platform earnings (the register gives the level)
    """\
tutors = pd.read_csv("data/tutors.csv")
sessions = sessions.merge(tutors, on="tutor_id", how="left", validate="many_to_one")
by_level = sessions.groupby("level")["earning"].sum()
{"level": by_level.idxmax(), "earnings": round(float(by_level.max()), 2)}
""",
    # 4. Bath tutors' share of the hours of all completed sessions (commission-free)
    """\
taught = sessions.loc[sessions["status"] == "completed", ["hours", "city"]]
bath = taught.loc[taught["city"] == "Bath", "hours"].sum()
round(float(100 * bath / taught["hours"].sum()), 2)
""",
    # 5. the revision: commission 12 % -> 15 %
    "COMMISSION_RATE = 0.15\n" + _RECOMPUTE + 'round(float(sessions["earning"].sum()), 2)\n',
    # 6. month with the highest platform earnings under the current commission
    """\
by_month = sessions.groupby(sessions["booked_on"].str[:7])["earning"].sum()
{"month": by_month.idxmax(), "earnings": round(float(by_month.max()), 2)}
""",
    # 7. tutors whose total earnings for the platform are above 300 (current commission)
    """\
per_tutor = sessions.groupby("tutor_id")["earning"].sum()
int((per_tutor > 300).sum())
""",
    # 8. mean platform earning of a completed session under the current commission
    'round(float(sessions.loc[sessions["status"] == "completed", "earning"].mean()), 2)\n',
    # 9. what the revision adds to the earnings from the Bristol tutors (the register)
    """\
original = (sessions["price"] * 0.12).where(completed, CANCELLATION_FEE)
bristol = sessions["city"] == "Bristol"
round(float(sessions.loc[bristol, "earning"].sum() - original[bristol].sum()), 2)
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
