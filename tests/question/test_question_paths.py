"""The file paths a question writes in its prose (`stateguard.question.paths`): DSEval
questions, which name their input files under ``inputs/``, and our own; a question that
writes no path (nothing) is checked as carefully as one that does."""

from __future__ import annotations

import pytest

from stateguard.question import backticked, bare_paths, names_file


@pytest.mark.parametrize(
    ("question", "spans", "bare"),
    [
        ("Load `inputs/points.csv` into `df`.", ["inputs/points.csv", "df"], []),
        # backticked: whole, spaces and all; bare: a sentence's full stop dropped
        (
            "Read `inputs/Netflix Userbase.csv` and also inputs/other.csv.",
            ["inputs/Netflix Userbase.csv"],
            ["other.csv"],
        ),
        # bare, a name with spaces gives its first piece only
        ("Read inputs/All Countries and Economies.csv into df.", [], ["All"]),
        ("see [here](inputs/q.data).", [], ["q.data"]),
        (
            "Fit ``X``, `y` on ./inputs/train.csv; then read inputs/test.csv.",
            ["X", "y"],
            ["train.csv", "test.csv"],
        ),
        # not stated: a template, a path under another folder, no path at all
        ("Save each frame as inputs/{name}.csv", [], []),
        ("Use `pd.read_csv` on the file data/inputs.csv", ["pd.read_csv"], []),
        ("What is the mean age?", [], []),
        ("", [], []),
    ],
)
def test_the_paths_a_question_writes(question: str, spans: list[str], bare: list[str]) -> None:
    assert backticked(question) == spans
    assert bare_paths(question, "inputs") == bare


def test_a_bare_path_is_read_under_the_folder_given() -> None:
    question = "Join data/a.csv with inputs/b.csv."
    assert bare_paths(question, "data") == ["a.csv"]
    assert bare_paths(question, "inputs") == ["b.csv"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("data/enrolments.csv holds one row per enrolment.", True),
        ("Read enrolments.csv first.", True),
        ("See `data/enrolments.csv`.", True),
        ("data/old_enrolments.csv holds the archive.", False),
        ("data/enrolments.csv.gz is compressed.", False),
        ("The enrolments of 2025.", False),
    ],
)
def test_a_file_name_is_named_only_as_a_name_of_its_own(text: str, named: bool) -> None:
    assert names_file(text, "enrolments.csv") is named
