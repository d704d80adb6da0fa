"""Reference solution of the audio-guides task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the concession-fee and income columns after the concession fee is revised. Venue and
desk kind come from the desk register, joined on ``desk_id`` (rentals from desks the
register does not list have no venue or desk kind). Each cell ends with an expression
whose value is the turn's answer.

    python examples/audio_guides/reference.py           # print the answers
    python examples/audio_guides/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = """\
returned = rentals["rental_state"] == "returned"
rentals["takings"] = rentals["handsets"] * rentals["handset_price"]
rentals["concession"] = (rentals["takings"] * CONCESSION_RATE).where(returned, 0.0)
rentals["income"] = rentals["concession"].where(returned, HANDLING_CHARGE)
"""

TURN_CODE: tuple[str, ...] = (
    # 1. rentals and refunded rentals
    """\
import pandas as pd
rentals = pd.read_csv("data/rentals.csv")
{"rentals": len(rentals), "refunded": int((rentals["rental_state"] == "refunded").sum())}
""",
    # 2. the museums trust's total income of 2025 (returned and refunded rentals) at 11 %
    "CONCESSION_RATE = 0.11\nHANDLING_CHARGE = 0.85\n"
    + _RECOMPUTE
    + 'round(float(rentals["income"].sum()), 2)\n',
    # 3. desk kind with the highest income (the register gives the desk kind)
    """\
desks = pd.read_csv("data/desks.csv")
rentals = rentals.merge(desks, on="desk_id", how="left", validate="many_to_one")
by_kind = rentals.groupby("desk_kind")["income"].sum()
{"desk_kind": by_kind.idxmax(), "income": round(float(by_kind.max()), 2)}
""",
    # 4. Natural History desks' share of the handsets of all returned rentals (fee-free)
    """\
issued = rentals.loc[rentals["rental_state"] == "returned", ["handsets", "venue"]]
natural = issued.loc[issued["venue"] == "Natural History", "handsets"].sum()
round(float(100 * natural / issued["handsets"].sum()), 2)
""",
    # 5. the revision: concession fee 11 % -> 14 %
    "CONCESSION_RATE = 0.14\n" + _RECOMPUTE + 'round(float(rentals["income"].sum()), 2)\n',
    # 6. month with the highest income under the current concession fee
    """\
by_month = rentals.groupby(rentals["issued_on"].str[:7])["income"].sum()
{"month": by_month.idxmax(), "income": round(float(by_month.max()), 2)}
""",
    # 7. desks whose total income for the trust is above 60 (current concession fee)
    """\
per_desk = rentals.groupby("desk_id")["income"].sum()
int((per_desk > 60).sum())
""",
    # 8. mean income of a returned rental under the current concession fee
    'round(float(rentals.loc[rentals["rental_state"] == "returned", "income"].mean()), 2)\n',
    # 9. what the revision adds to the income from the Maritime Museum desks (the register)
    """\
original = (rentals["takings"] * 0.11).where(returned, HANDLING_CHARGE)
maritime = rentals["venue"] == "Maritime Museum"
round(float(rentals.loc[maritime, "income"].sum() - original[maritime].sum()), 2)
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
