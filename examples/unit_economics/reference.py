"""Reference solution of the unit-economics task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the cost columns after the cost-rate revision. Each cell ends with an expression
whose value is the turn's answer.

    python examples/unit_economics/reference.py           # print the answers
    python examples/unit_economics/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE_COSTS = """\
orders["cogs"] = orders["net_revenue"] * COGS_RATE
orders["contribution"] = orders["net_revenue"] - orders["cogs"] - orders["shipping_cost"]
"""

TURN_CODE: tuple[str, ...] = (
    # 1. size and net revenue
    """\
import pandas as pd
orders = pd.read_csv("data/orders.csv")
orders["net_revenue"] = orders["units"] * orders["unit_price"] * (1 - orders["discount"])
{"orders": len(orders), "net_revenue": round(float(orders["net_revenue"].sum()), 2)}
""",
    # 2. contribution margin at the original 42% COGS rate
    "COGS_RATE = 0.42\n" + _RECOMPUTE_COSTS + 'round(float(orders["contribution"].sum()), 2)\n',
    # 3. best region
    """\
by_region = orders.groupby("region")["contribution"].sum()
{"region": by_region.idxmax(), "contribution": round(float(by_region.max()), 2)}
""",
    # 4. Online contribution margin in % of its net revenue
    """\
online = orders[orders["channel"] == "Online"]
round(float(100 * online["contribution"].sum() / online["net_revenue"].sum()), 2)
""",
    # 5. the revision: COGS rate 42% -> 47%
    "COGS_RATE = 0.47\n" + _RECOMPUTE_COSTS + 'round(float(orders["contribution"].sum()), 2)\n',
    # 6. loss-making orders under the current rate
    'int((orders["contribution"] < 0).sum())\n',
    # 7. best month by net revenue (independent of the rate)
    """\
monthly = orders.groupby(orders["date"].str[:7])["net_revenue"].sum()
monthly.idxmax()
""",
    # 8. average Partner discount on Enterprise (independent of the rate)
    """\
ent_partner = orders[(orders["product"] == "Enterprise") & (orders["channel"] == "Partner")]
round(float(ent_partner["discount"].mean()), 4)
""",
    # 9. contribution by channel (must use the revised rate)
    """\
by_channel = orders.groupby("channel")["contribution"].sum()
{channel: round(float(value), 2) for channel, value in by_channel.items()}
""",
    # 10. Premium contribution per unit (must use the revised rate)
    """\
premium = orders[orders["product"] == "Premium"]
round(float(premium["contribution"].sum() / premium["units"].sum()), 2)
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
