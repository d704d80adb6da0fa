"""Reference solution of the laundry-rounds task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the commission and income columns after the commission is revised. Site and machine type
come from the machine register, joined on ``machine_id`` (cycles of machines the register
does not list have no site or type). Each cell ends with an expression whose value is the
turn's answer.

    python examples/laundry_rounds/reference.py           # print the answers
    python examples/laundry_rounds/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
paid = cycles["cycle_state"] == "paid"
cycles["price"] = cycles["kg_load"] * cycles["price_per_kg"]
cycles["commission"] = (cycles["price"] * COMMISSION_RATE).where(paid, 0.0)
cycles["income"] = cycles["commission"].where(paid, REFUND_HANDLING)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. cycles and refunded cycles
    """\
import pandas as pd
cycles = pd.read_csv("data/cycles.csv")
{"cycles": len(cycles), "refunded": int((cycles["cycle_state"] == "refunded").sum())}
""",
    # 2. the landlords' total income of 2025 (paid and refunded cycles) at 12 %
    "COMMISSION_RATE = 0.12\nREFUND_HANDLING = 1.50\n"
    + _RECOMPUTE
    + 'round(float(cycles["income"].sum()), 2)\n',
    # 3. machine type with the highest income (the register gives the type)
    """\
machines = pd.read_csv("data/machines.csv")
cycles = cycles.merge(machines, on="machine_id", how="left", validate="many_to_one")
by_type = cycles.groupby("machine_type")["income"].sum()
{"machine_type": by_type.idxmax(), "income": round(float(by_type.max()), 2)}
""",
    # 4. Parkside machines' share of the price of all paid cycles (commission-free)
    """\
sold = cycles.loc[cycles["cycle_state"] == "paid", ["price", "site"]]
parkside = sold.loc[sold["site"] == "Parkside", "price"].sum()
round(float(100 * parkside / sold["price"].sum()), 2)
""",
    # 5. the revision: commission 12 % -> 15 %
    "COMMISSION_RATE = 0.15\n" + _RECOMPUTE + 'round(float(cycles["income"].sum()), 2)\n',
    # 6. month with the highest income under the current commission
    """\
by_month = cycles.groupby(cycles["started_at"].str[:7])["income"].sum()
{"month": by_month.idxmax(), "income": round(float(by_month.max()), 2)}
""",
    # 7. machines whose total income for the landlords is above 100 (current commission)
    """\
per_machine = cycles.groupby("machine_id")["income"].sum()
int((per_machine > 100).sum())
""",
    # 8. mean income of a paid cycle under the current commission
    'round(float(cycles.loc[cycles["cycle_state"] == "paid", "income"].mean()), 2)\n',
    # 9. what the revision adds to the income from the Mill Lane machines (the register)
    """\
original = (cycles["price"] * 0.12).where(paid, REFUND_HANDLING)
mill_lane = cycles["site"] == "Mill Lane"
round(float(cycles.loc[mill_lane, "income"].sum() - original[mill_lane].sum()), 2)
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
