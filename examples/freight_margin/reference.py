"""Reference solution of the freight-margin task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the billed amount and the gross profit after the fuel-surcharge revision. Each cell
ends with an expression whose value is the turn's answer.

    python examples/freight_margin/reference.py           # print the answers
    python examples/freight_margin/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
shipments["fuel_surcharge"] = shipments["base_charge"] * SURCHARGE
shipments["billed"] = (
    shipments["base_charge"] + shipments["fuel_surcharge"] + shipments["handling_fee"]
)
shipments["gross_profit"] = shipments["billed"] - shipments["carrier_cost"]
"""

TURN_CODE: tuple[str, ...] = (
    # 1. size and base charge
    """\
import pandas as pd
shipments = pd.read_csv("data/shipments.csv")
shipments["base_charge"] = shipments["weight_kg"] * shipments["rate_per_kg"]
{"shipments": len(shipments), "base_charge": round(float(shipments["base_charge"].sum()), 2)}
""",
    # 2. gross profit at the original 9% fuel surcharge
    "SURCHARGE = 0.09\n" + _RECOMPUTE + 'round(float(shipments["gross_profit"].sum()), 2)\n',
    # 3. best depot
    """\
by_depot = shipments.groupby("depot")["gross_profit"].sum()
{"depot": by_depot.idxmax(), "profit": round(float(by_depot.max()), 2)}
""",
    # 4. Express gross profit in % of its billed amount
    """\
express = shipments[shipments["service"] == "Express"]
round(float(100 * express["gross_profit"].sum() / express["billed"].sum()), 2)
""",
    # 5. the revision: fuel surcharge 9% -> 4%
    "SURCHARGE = 0.04\n" + _RECOMPUTE + 'round(float(shipments["gross_profit"].sum()), 2)\n',
    # 6. loss-making shipments under the current surcharge
    'int((shipments["gross_profit"] < 0).sum())\n',
    # 7. heaviest month (independent of the surcharge)
    """\
monthly = shipments.groupby(shipments["pickup_date"].str[:7])["weight_kg"].sum()
monthly.idxmax()
""",
    # 8. average parcels of Wholesale shipments from Glasgow (independent of the surcharge)
    """\
glasgow_wholesale = shipments[
    (shipments["depot"] == "Glasgow") & (shipments["segment"] == "Wholesale")
]
round(float(glasgow_wholesale["parcels"].mean()), 2)
""",
    # 9. gross profit by service (must use the revised surcharge)
    """\
by_service = shipments.groupby("service")["gross_profit"].sum()
{service: round(float(value), 2) for service, value in by_service.items()}
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
