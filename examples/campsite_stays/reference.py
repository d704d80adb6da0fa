"""Reference solution of the campsite-stays task: its gold answers, worked out with pandas.

``TURN_CODE[i]`` holds the code of turn ``i + 1`` as one analyst would type it into a
single running session: a cell builds on the variables of the cells before it, and turn
5 works out the levy and proceeds columns again once the conservation levy has been
revised. The campground and the plot setting come from the plot register, joined on
``plot_id`` (stays on plots the register leaves out get neither). The last expression of
each cell is the answer of its turn.

    python examples/campsite_stays/reference.py           # print the answers
    python examples/campsite_stays/reference.py --check   # compare them with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
arrived = stays["attendance"] == "arrived"
stays["bill"] = stays["nights"] * stays["price_per_night"]
stays["levy"] = (stays["bill"] * LEVY_RATE).where(arrived, 0.0)
stays["proceeds"] = stays["levy"].where(arrived, PERMIT_CHARGE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. stays, and stays whose guests never arrived
    """\
import pandas as pd
stays = pd.read_csv("data/stays.csv")
{"stays": len(stays), "missed": int((stays["attendance"] == "no-show").sum())}
""",
    # 2. the park authority's proceeds over 2025 (arrivals and no-shows) at a 5 % levy
    "LEVY_RATE = 0.05\nPERMIT_CHARGE = 1.50\n"
    + _RECOMPUTE
    + 'round(float(stays["proceeds"].sum()), 2)\n',
    # 3. the plot setting that brings the authority the most (setting from the register)
    """\
plots = pd.read_csv("data/plots.csv")
stays = stays.merge(plots, on="plot_id", how="left", validate="many_to_one")
by_setting = stays.groupby("plot_setting")["proceeds"].sum()
{"plot_setting": by_setting.idxmax(), "proceeds": round(float(by_setting.max()), 2)}
""",
    # 4. Larch Hollow's share of the nights of all arrived stays (no levy involved)
    """\
slept = stays.loc[stays["attendance"] == "arrived", ["nights", "campground"]]
larch = slept.loc[slept["campground"] == "Larch Hollow", "nights"].sum()
round(float(100 * larch / slept["nights"].sum()), 2)
""",
    # 5. the revision: conservation levy 5 % -> 7 %
    "LEVY_RATE = 0.07\n" + _RECOMPUTE + 'round(float(stays["proceeds"].sum()), 2)\n',
    # 6. the month with the most proceeds under the levy in force
    """\
by_month = stays.groupby(stays["due_on"].str[:7])["proceeds"].sum()
{"month": by_month.idxmax(), "proceeds": round(float(by_month.max()), 2)}
""",
    # 7. plots whose proceeds over the year exceed 300 (levy in force)
    """\
per_plot = stays.groupby("plot_id")["proceeds"].sum()
int((per_plot > 300).sum())
""",
    # 8. mean proceeds of an arrived stay under the levy in force
    'round(float(stays.loc[stays["attendance"] == "arrived", "proceeds"].mean()), 2)\n',
    # 9. what the revision adds to the proceeds from the Heron Water plots (the register)
    """\
before = (stays["bill"] * 0.05).where(arrived, PERMIT_CHARGE)
heron = stays["campground"] == "Heron Water"
round(float(stays.loc[heron, "proceeds"].sum() - before[heron].sum()), 2)
""",
)


def compute_answers(base: Path = HERE) -> list[Any]:
    """Run the cells of all turns in one namespace, from ``base`` (where ``data/`` is)."""
    return run_cells(TURN_CODE, base)


def check(task_file: Path = HERE / "task.yaml") -> list[str]:
    """Where the computed answers and the gold answers of ``task_file`` disagree."""
    return mismatches(task_file, compute_answers())


if __name__ == "__main__":
    sys.exit(reference_main(__doc__ or "", compute_answers, check))
