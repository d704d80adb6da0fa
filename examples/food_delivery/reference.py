"""Reference solution of the food-delivery task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the commission and payout columns after the commission revision. Cuisine and district
come from the restaurant register, joined on ``restaurant_id`` (orders of restaurants the
register does not list have no cuisine or district). Each cell ends with an expression
whose value is the turn's answer.

    python examples/food_delivery/reference.py           # print the answers
    python examples/food_delivery/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
delivered = orders["status"] == "delivered"
orders["fee"] = (FEE_BASE + FEE_PER_KM * orders["distance_km"]).where(delivered, 0.0)
orders["commission"] = (orders["basket_value"] * COMMISSION_RATE).where(delivered, 0.0)
orders["payout"] = orders["basket_value"].where(delivered, 0.0) - orders["commission"]
"""

TURN_CODE: tuple[str, ...] = (
    # 1. orders and refunded orders
    """\
import pandas as pd
orders = pd.read_csv("data/orders.csv")
{"orders": len(orders), "refunded": int((orders["status"] == "refunded").sum())}
""",
    # 2. total commission of the delivered orders at the original rate
    "FEE_BASE = 1.50\nFEE_PER_KM = 0.60\nCOMMISSION_RATE = 0.15\n"
    + _RECOMPUTE
    + 'round(float(orders["commission"].sum()), 2)\n',
    # 3. district with the highest total payout (the register gives the district)
    """\
restaurants = pd.read_csv("data/restaurants.csv")
orders = orders.merge(restaurants, on="restaurant_id", how="left", validate="many_to_one")
by_district = orders.groupby("district")["payout"].sum()
{"district": by_district.idxmax(), "payout": round(float(by_district.max()), 2)}
""",
    # 4. Pizza restaurants' share of the basket value of all delivered orders (commission-free)
    """\
baskets = orders.loc[orders["status"] == "delivered", ["basket_value", "cuisine"]]
pizza = baskets.loc[baskets["cuisine"] == "Pizza", "basket_value"].sum()
round(float(100 * pizza / baskets["basket_value"].sum()), 2)
""",
    # 5. the revision: commission 15 % -> 18 %
    "COMMISSION_RATE = 0.18\n" + _RECOMPUTE + 'round(float(orders["commission"].sum()), 2)\n',
    # 6. restaurants with a total payout above 1500 under the current commission
    """\
per_restaurant = orders.groupby("restaurant_id")["payout"].sum()
int((per_restaurant > 1500).sum())
""",
    # 7. mean delivery fee of a delivered order placed on a weekend (independent)
    """\
weekday = pd.to_datetime(orders["placed_on"]).dt.day_name()
weekend = (orders["status"] == "delivered") & weekday.isin(["Saturday", "Sunday"])
round(float(orders.loc[weekend, "fee"].mean()), 2)
""",
    # 8. total payout by cuisine (the register and the revised commission)
    """\
by_cuisine = orders.groupby("cuisine")["payout"].sum()
{kind: round(float(by_cuisine[kind]), 2) for kind in ("Burgers", "Curry", "Pizza", "Sushi")}
""",
    # 9. payout of the Harbour restaurants (the register and the revised commission)
    'round(float(orders.loc[orders["district"] == "Harbour", "payout"].sum()), 2)\n',
)


def compute_answers(base: Path = HERE) -> list[Any]:
    """Run every turn's cell in one namespace, from ``base`` (which holds ``data/``)."""
    return run_cells(TURN_CODE, base)


def check(task_file: Path = HERE / "task.yaml") -> list[str]:
    """Mismatches between the computed answers and the gold answers of ``task_file``."""
    return mismatches(task_file, compute_answers())


if __name__ == "__main__":
    sys.exit(reference_main(__doc__ or "", compute_answers, check))
