"""Reference solution of the kiln-firings task: its gold answers, worked out with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1`` as an analyst would enter it in one
running session: each cell may use what the cells before it left behind, and turn 5
rebuilds the share and takings columns once the kiln-room share has been revised. The
workshop and the heat source come from the kiln register, joined on ``kiln_code`` (loads
on kilns the register does not list get neither). Turn 9 goes back to the heat source and
the figure found at turn 3, before the revision. Each cell's last expression is the
answer of its turn.

    python examples/kiln_firings/reference.py           # print the answers
    python examples/kiln_firings/reference.py --check   # compare them with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
fired = loads["outcome"] == "fired"
loads["load_fee"] = loads["shelves"] * loads["shelf_fee"]
loads["room_share"] = (loads["load_fee"] * SHARE_RATE).where(fired, 0.0)
loads["takings"] = loads["room_share"].where(fired, REBOOKING_CHARGE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. loads booked, and loads pulled before the firing
    """\
import pandas as pd
loads = pd.read_csv("data/loads.csv")
{"loads": len(loads), "pulled": int((loads["outcome"] == "pulled").sum())}
""",
    # 2. the arts trust's takings over 2025 (fired and pulled loads) at a 9 % share
    "SHARE_RATE = 0.09\nREBOOKING_CHARGE = 1.75\n"
    + _RECOMPUTE
    + 'round(float(loads["takings"].sum()), 2)\n',
    # 3. the heat source whose kilns bring the trust the most (from the register)
    """\
kilns = pd.read_csv("data/kilns.csv")
loads = loads.merge(kilns, on="kiln_code", how="left", validate="many_to_one")
by_source = loads.groupby("heat_source")["takings"].sum()
{"heat_source": by_source.idxmax(), "takings": round(float(by_source.max()), 2)}
""",
    # 4. Canal Yard's share of the pieces in all fired loads (no share rate involved)
    """\
done = loads.loc[loads["outcome"] == "fired", ["pieces", "workshop"]]
canal = done.loc[done["workshop"] == "Canal Yard", "pieces"].sum()
round(float(100 * canal / done["pieces"].sum()), 2)
""",
    # 5. the revision: kiln-room share 9 % -> 12 %
    "SHARE_RATE = 0.12\n" + _RECOMPUTE + 'round(float(loads["takings"].sum()), 2)\n',
    # 6. the calendar quarter with the largest takings at the share in force
    """\
by_quarter = loads.groupby(pd.to_datetime(loads["fire_date"]).dt.quarter)["takings"].sum()
{"quarter": int(by_quarter.idxmax()), "takings": round(float(by_quarter.max()), 2)}
""",
    # 7. members whose loads bring the trust more than 25 over the year (share in force)
    """\
per_member = loads.groupby("member_no")["takings"].sum()
int((per_member > 25).sum())
""",
    # 8. mean takings of a fired glaze load at the share in force
    """\
glazed = (loads["outcome"] == "fired") & (loads["glaze_stage"] == "glaze")
round(float(loads.loc[glazed, "takings"].mean()), 2)
""",
    # 9. how far the turn-3 heat source's takings now exceed the figure found at turn 3
    """\
top = by_source.idxmax()
round(float(loads.loc[loads["heat_source"] == top, "takings"].sum() - by_source.max()), 2)
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
