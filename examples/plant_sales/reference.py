"""Reference solution of the plant-sales task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the commission and receipts columns after the pitch commission is revised. Market town
and pitch layout come from the pitch register, joined on ``pitch_id`` (sales at pitches
the register does not list have no town or layout). Each cell ends with an expression
whose value is the turn's answer.

    python examples/plant_sales/reference.py           # print the answers
    python examples/plant_sales/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
paid = sales["settlement"] == "paid"
sales["takings"] = sales["trays"] * sales["tray_price"]
sales["commission"] = (sales["takings"] * PITCH_RATE).where(paid, 0.0)
sales["receipts"] = sales["commission"].where(paid, DISPOSAL_CHARGE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. sales and returned sales
    """\
import pandas as pd
sales = pd.read_csv("data/sales.csv")
{"sales": len(sales), "returned": int((sales["settlement"] == "returned").sum())}
""",
    # 2. the markets association's total receipts of 2025 (paid and returned sales) at 6 %
    "PITCH_RATE = 0.06\nDISPOSAL_CHARGE = 1.20\n"
    + _RECOMPUTE
    + 'round(float(sales["receipts"].sum()), 2)\n',
    # 3. pitch layout with the largest receipts (the register gives the layout)
    """\
pitches = pd.read_csv("data/pitches.csv")
sales = sales.merge(pitches, on="pitch_id", how="left", validate="many_to_one")
by_layout = sales.groupby("pitch_layout")["receipts"].sum()
{"pitch_layout": by_layout.idxmax(), "receipts": round(float(by_layout.max()), 2)}
""",
    # 4. Ashcombe pitches' share of the trays of all paid sales (commission-free)
    """\
sold = sales.loc[sales["settlement"] == "paid", ["trays", "market_town"]]
ashcombe = sold.loc[sold["market_town"] == "Ashcombe", "trays"].sum()
round(float(100 * ashcombe / sold["trays"].sum()), 2)
""",
    # 5. the revision: pitch commission 6 % -> 8 %
    "PITCH_RATE = 0.08\n" + _RECOMPUTE + 'round(float(sales["receipts"].sum()), 2)\n',
    # 6. month with the largest receipts under the current pitch commission
    """\
by_month = sales.groupby(sales["sold_on"].str[:7])["receipts"].sum()
{"month": by_month.idxmax(), "receipts": round(float(by_month.max()), 2)}
""",
    # 7. pitches whose total receipts for the association are above 100 (current rate)
    """\
per_pitch = sales.groupby("pitch_id")["receipts"].sum()
int((per_pitch > 100).sum())
""",
    # 8. mean receipts of a paid sale under the current pitch commission
    'round(float(sales.loc[sales["settlement"] == "paid", "receipts"].mean()), 2)\n',
    # 9. what the revision adds to the receipts from the Dunmere pitches (the register)
    """\
original = (sales["takings"] * 0.06).where(paid, DISPOSAL_CHARGE)
dunmere = sales["market_town"] == "Dunmere"
round(float(sales.loc[dunmere, "receipts"].sum() - original[dunmere].sum()), 2)
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
