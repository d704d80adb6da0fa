"""Reference solution of the ticket-sales task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the fee and net columns after the fee revision. Category, city and month come from the
event register, joined on ``event_id`` (tickets of events the register does not list
have no category, city or month). Each cell ends with an expression whose value is the
turn's answer.

    python examples/ticket_sales/reference.py           # print the answers
    python examples/ticket_sales/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
tickets["fee"] = tickets["price"].where(tickets["status"] == "valid", 0.0) * FEE_RATE
tickets["net"] = tickets["price"].where(tickets["status"] == "valid", 0.0) - tickets["fee"]
"""

TURN_CODE: tuple[str, ...] = (
    # 1. tickets and refunded tickets
    """\
import pandas as pd
tickets = pd.read_csv("data/tickets.csv")
{"tickets": len(tickets), "refunded": int((tickets["status"] == "refunded").sum())}
""",
    # 2. total platform fee at the original rate
    "FEE_RATE = 0.08\n" + _RECOMPUTE + 'round(float(tickets["fee"].sum()), 2)\n',
    # 3. city with the highest total organiser net (the register gives the city)
    """\
events = pd.read_csv("data/events.csv")
tickets = tickets.merge(events, on="event_id", how="left", validate="many_to_one")
by_city = tickets.groupby("city")["net"].sum()
{"city": by_city.idxmax(), "net": round(float(by_city.max()), 2)}
""",
    # 4. Festival events' share of the revenue of all valid tickets (independent of the fee)
    """\
valid = tickets["status"] == "valid"
festival = tickets.loc[valid & (tickets["category"] == "Festival"), "price"].sum()
round(float(100 * festival / tickets.loc[valid, "price"].sum()), 2)
""",
    # 5. the revision: service fee 8 % -> 10 %
    "FEE_RATE = 0.10\n" + _RECOMPUTE + 'round(float(tickets["fee"].sum()), 2)\n',
    # 6. buyers with a total organiser net above 320 under the current fee
    """\
per_buyer = tickets.groupby("buyer_id")["net"].sum()
int((per_buyer > 320).sum())
""",
    # 7. mean price of a refunded ticket (independent)
    'round(float(tickets.loc[tickets["status"] == "refunded", "price"].mean()), 2)\n',
    # 8. total organiser net by quarter of the event's month (the register and the new fee)
    """\
quarter = pd.to_datetime(tickets["month"], format="%Y-%m").dt.quarter
by_quarter = tickets.groupby(quarter)["net"].sum()
{f"Q{q}": round(float(by_quarter[q]), 2) for q in (1, 2, 3, 4)}
""",
    # 9. organiser net of the Glasgow events (the register and the revised fee)
    'round(float(tickets.loc[tickets["city"] == "Glasgow", "net"].sum()), 2)\n',
)


def compute_answers(base: Path = HERE) -> list[Any]:
    """Run every turn's cell in one namespace, from ``base`` (which holds ``data/``)."""
    return run_cells(TURN_CODE, base)


def check(task_file: Path = HERE / "task.yaml") -> list[str]:
    """Mismatches between the computed answers and the gold answers of ``task_file``."""
    return mismatches(task_file, compute_answers())


if __name__ == "__main__":
    sys.exit(reference_main(__doc__ or "", compute_answers, check))
