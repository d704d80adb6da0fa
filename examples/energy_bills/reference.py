"""Reference solution of the energy-bills task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the cost column after the unit-rate revision. Region and tariff come from the household
register, joined on ``household_id`` (readings of households the register does not list
have no region or tariff). Each cell ends with an expression whose value is the turn's
answer.

    python examples/energy_bills/reference.py           # print the answers
    python examples/energy_bills/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = 'readings["cost"] = readings["kwh"] * UNIT_RATE + readings["days"] * STANDING\n'

TURN_CODE: tuple[str, ...] = (
    # 1. households with readings, total consumption
    """\
import pandas as pd
readings = pd.read_csv("data/readings.csv")
{"households": readings["household_id"].nunique(), "kwh": round(float(readings["kwh"].sum()), 2)}
""",
    # 2. total cost at the original unit rate
    "UNIT_RATE = 0.27\nSTANDING = 0.45\n"
    + _RECOMPUTE
    + 'round(float(readings["cost"].sum()), 2)\n',
    # 3. region with the highest total cost (the register gives the region)
    """\
households = pd.read_csv("data/households.csv")
readings = readings.merge(households, on="household_id", how="left", validate="many_to_one")
by_region = readings.groupby("region")["cost"].sum()
{"region": by_region.idxmax(), "cost": round(float(by_region.max()), 2)}
""",
    # 4. Green tariff's share of the consumption (independent of the rate)
    """\
green = readings.loc[readings["tariff"] == "Green", "kwh"].sum()
round(float(100 * green / readings["kwh"].sum()), 2)
""",
    # 5. the revision: unit rate 0.27 -> 0.31
    "UNIT_RATE = 0.31\n" + _RECOMPUTE + 'round(float(readings["cost"].sum()), 2)\n',
    # 6. households above 900 a year under the current rate
    """\
per_household = readings.groupby("household_id")["cost"].sum()
int((per_household > 900).sum())
""",
    # 7. median kwh per reading of households with 4 or more occupants (independent)
    'round(float(readings.loc[readings["occupants"] >= 4, "kwh"].median()), 2)\n',
    # 8. total cost by tariff (must use the revised rate)
    """\
by_tariff = readings.groupby("tariff")["cost"].sum()
{tariff: round(float(value), 2) for tariff, value in by_tariff.items()}
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
