"""Reference solution of the course-fees task: the gold answers, computed with pandas.

``TURN_CODE[i]`` is the code of turn ``i + 1``, written the way an analyst in one
persistent session would: later cells reuse earlier variables, and turn 5 re-derives
the tuition column after the fee revision. Department and level come from the course
catalogue, joined on ``course_code`` (enrolments in courses the catalogue does not list
have no department or level). Each cell ends with an expression whose value is the
turn's answer.

    python examples/course_fees/reference.py           # print the answers
    python examples/course_fees/reference.py --check   # compare with task.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from stateguard.worker.reference import mismatches, reference_main, run_cells

HERE = Path(__file__).resolve().parent

_RECOMPUTE = 'enrolments["tuition"] = enrolments["credits"] * FEE_PER_CREDIT + REGISTRATION\n'

TURN_CODE: tuple[str, ...] = (
    # 1. students and enrolments
    """\
import pandas as pd
enrolments = pd.read_csv("data/enrolments.csv")
{"students": enrolments["student_id"].nunique(), "enrolments": len(enrolments)}
""",
    # 2. total tuition at the original fee
    "FEE_PER_CREDIT = 180\nREGISTRATION = 25\n"
    + _RECOMPUTE
    + 'round(float(enrolments["tuition"].sum()), 2)\n',
    # 3. department with the highest total tuition (the catalogue gives the department)
    """\
courses = pd.read_csv("data/courses.csv")
enrolments = enrolments.merge(courses, on="course_code", how="left", validate="many_to_one")
by_department = enrolments.groupby("department")["tuition"].sum()
{"department": by_department.idxmax(), "tuition": round(float(by_department.max()), 2)}
""",
    # 4. Graduate courses' share of all credits (independent of the fee)
    """\
graduate = enrolments.loc[enrolments["level"] == "Graduate", "credits"].sum()
round(float(100 * graduate / enrolments["credits"].sum()), 2)
""",
    # 5. the revision: fee per credit 180 -> 195
    "FEE_PER_CREDIT = 195\n" + _RECOMPUTE + 'round(float(enrolments["tuition"].sum()), 2)\n',
    # 6. students above 3000 under the current fee
    """\
per_student = enrolments.groupby("student_id")["tuition"].sum()
int((per_student > 3000).sum())
""",
    # 7. mean credits per Summer enrolment (independent)
    'round(float(enrolments.loc[enrolments["term"] == "Summer", "credits"].mean()), 2)\n',
    # 8. total tuition by term (must use the revised fee)
    """\
by_term = enrolments.groupby("term")["tuition"].sum()
{term: round(float(by_term[term]), 2) for term in ("Spring", "Summer", "Autumn")}
""",
    # 9. tuition of the Mathematics department (the catalogue and the revised fee)
    'round(float(enrolments.loc[enrolments["department"] == "Mathematics", "tuition"].sum()), 2)\n',
)


def compute_answers(base: Path = HERE) -> list[Any]:
    """Run every turn's cell in one namespace, from ``base`` (which holds ``data/``)."""
    return run_cells(TURN_CODE, base)


def check(task_file: Path = HERE / "task.yaml") -> list[str]:
    """Mismatches between the computed answers and the gold answers of ``task_file``."""
    return mismatches(task_file, compute_answers())


if __name__ == "__main__":
    sys.exit(reference_main(__doc__ or "", compute_answers, check))
