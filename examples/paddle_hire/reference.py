"""Reference solution of the paddle-hire task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the levy and receipts columns after the navigation levy is revised. River reach and
launch type come from the outpost register, joined on ``outpost_id`` (hires from outposts
the register does not list have no reach or launch type). Each cell ends with an
expression whose value is the turn's answer.

    python examples/paddle_hire/reference.py           # print the answers
    python examples/paddle_hire/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
completed = hires["hire_status"] == "completed"
hires["charge"] = hires["hours"] * hires["hourly_rate"]
hires["levy"] = (hires["charge"] * LEVY_RATE).where(completed, 0.0)
hires["receipts"] = hires["levy"].where(completed, SLOT_FEE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. hires and called-off hires
    """\
import pandas as pd
hires = pd.read_csv("data/hires.csv")
{"hires": len(hires), "called_off": int((hires["hire_status"] == "called-off").sum())}
""",
    # 2. the river trust's total receipts of 2025 (completed and called-off hires) at 7 %
    "LEVY_RATE = 0.07\nSLOT_FEE = 1.60\n"
    + _RECOMPUTE
    + 'round(float(hires["receipts"].sum()), 2)\n',
    # 3. launch type with the highest receipts (the register gives the launch type)
    """\
outposts = pd.read_csv("data/outposts.csv")
hires = hires.merge(outposts, on="outpost_id", how="left", validate="many_to_one")
by_launch = hires.groupby("launch_type")["receipts"].sum()
{"launch_type": by_launch.idxmax(), "receipts": round(float(by_launch.max()), 2)}
""",
    # 4. Lockside outposts' share of the hours of all completed hires (levy-free)
    """\
paddled = hires.loc[hires["hire_status"] == "completed", ["hours", "river_reach"]]
lockside = paddled.loc[paddled["river_reach"] == "Lockside", "hours"].sum()
round(float(100 * lockside / paddled["hours"].sum()), 2)
""",
    # 5. the revision: navigation levy 7 % -> 9 %
    "LEVY_RATE = 0.09\n" + _RECOMPUTE + 'round(float(hires["receipts"].sum()), 2)\n',
    # 6. outposts whose total receipts for the trust are above 100 (current levy)
    """\
per_outpost = hires.groupby("outpost_id")["receipts"].sum()
int((per_outpost > 100).sum())
""",
    # 7. month with the highest receipts under the current levy
    """\
by_month = hires.groupby(hires["launched_on"].str[:7])["receipts"].sum()
{"month": by_month.idxmax(), "receipts": round(float(by_month.max()), 2)}
""",
    # 8. mean receipts of a completed hire under the current levy
    'round(float(hires.loc[hires["hire_status"] == "completed", "receipts"].mean()), 2)\n',
    # 9. what the revision adds to the receipts from the Marsh End outposts (the register)
    """\
original = (hires["charge"] * 0.07).where(completed, SLOT_FEE)
marsh_end = hires["river_reach"] == "Marsh End"
round(float(hires.loc[marsh_end, "receipts"].sum() - original[marsh_end].sum()), 2)
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
