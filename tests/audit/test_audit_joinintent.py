"""Reading from a question which rows a join should keep."""

from __future__ import annotations

import pytest

from stateguard.audit.joinintent import rows_asked


@pytest.mark.parametrize(
    "question",
    [
        "Merge all values in data1 and data2, with matching records from both sides where "
        "available.",
        "Join customers and orders, keeping every customer",
        "Combine the tables with an outer join on id",
        "Do a left join of sales on regions",
        "Merge the two frames so that no row is lost",
        "Attach the targets to each year, even if a year has no target",
        "Merge on subject_id, keeping unmatched subjects",
        "Join revenue and costs and give the margin for every year",
    ],
)
def test_questions_that_ask_to_keep_unmatched_rows(question: str) -> None:
    assert rows_asked(question) == "all"


@pytest.mark.parametrize(
    "question",
    [
        "Merge only the data that has the same 'subject_id' on both data1 and data2",
        "Inner join the two tables on year",
        "Keep the ids present in both tables",
    ],
)
def test_questions_that_ask_for_the_shared_rows(question: str) -> None:
    assert rows_asked(question) == "matching"


@pytest.mark.parametrize(
    "question",
    [
        "Merge all_data and data3 along the subject_id value",  # an identifier, not "all"
        "What is the overall mean of the merged table?",
        "Merge sales and targets on year",
        "",
    ],
)
def test_questions_that_state_no_choice(question: str) -> None:
    assert rows_asked(question) == "unstated"


def test_no_question_is_not_an_unstated_one() -> None:
    assert rows_asked(None) is None
