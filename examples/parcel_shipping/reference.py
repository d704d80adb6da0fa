"""Reference solution of the parcel-shipping task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the surcharge and charge columns after the surcharge revision. Sector and city come from
the sender register, joined on ``sender_id`` (shipments of senders the register does not
list have no sector or city). Each cell ends with an expression whose value is the turn's
answer.

    python examples/parcel_shipping/reference.py           # print the answers
    python examples/parcel_shipping/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
delivered = shipments["status"] == "delivered"
shipments["surcharge"] = (shipments["declared_value"] * SURCHARGE_RATE).where(delivered, 0.0)
shipments["charge"] = (BASE_FEE + PER_KG * shipments["weight_kg"]).where(
    delivered, RETURN_FEE
) + shipments["surcharge"]
"""

TURN_CODE: tuple[str, ...] = (
    # 1. shipments and returned shipments
    """\
import pandas as pd
shipments = pd.read_csv("data/shipments.csv")
{"shipments": len(shipments), "returned": int((shipments["status"] == "returned").sum())}
""",
    # 2. total charges of 2025 (delivered and returned) at the original surcharge
    "BASE_FEE = 4.00\nPER_KG = 0.90\nSURCHARGE_RATE = 0.02\nRETURN_FEE = 6.50\n"
    + _RECOMPUTE
    + 'round(float(shipments["charge"].sum()), 2)\n',
    # 3. sector with the highest total charges (the register gives the sector)
    """\
senders = pd.read_csv("data/senders.csv")
shipments = shipments.merge(senders, on="sender_id", how="left", validate="many_to_one")
by_sector = shipments.groupby("sector")["charge"].sum()
{"sector": by_sector.idxmax(), "charges": round(float(by_sector.max()), 2)}
""",
    # 4. Homeware senders' share of the weight of all delivered shipments (surcharge-free)
    """\
parcels = shipments.loc[shipments["status"] == "delivered", ["weight_kg", "sector"]]
homeware = parcels.loc[parcels["sector"] == "Homeware", "weight_kg"].sum()
round(float(100 * homeware / parcels["weight_kg"].sum()), 2)
""",
    # 5. the revision: insurance surcharge 2 % -> 3 %
    "SURCHARGE_RATE = 0.03\n" + _RECOMPUTE + 'round(float(shipments["charge"].sum()), 2)\n',
    # 6. month with the highest total charges under the current surcharge
    """\
by_month = shipments.groupby(shipments["shipped_on"].str[:7])["charge"].sum()
{"month": by_month.idxmax(), "charges": round(float(by_month.max()), 2)}
""",
    # 7. senders with total charges above 500 under the current surcharge
    """\
per_sender = shipments.groupby("sender_id")["charge"].sum()
int((per_sender > 500).sum())
""",
    # 8. mean charge of a delivered shipment under the current surcharge
    'round(float(shipments.loc[shipments["status"] == "delivered", "charge"].mean()), 2)\n',
    # 9. what the revision adds to the charges of the Leeds senders (the register)
    """\
original = (BASE_FEE + PER_KG * shipments["weight_kg"]).where(delivered, RETURN_FEE) + (
    shipments["declared_value"] * 0.02
).where(delivered, 0.0)
leeds = shipments["city"] == "Leeds"
round(float(shipments.loc[leeds, "charge"].sum() - original[leeds].sum()), 2)
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
