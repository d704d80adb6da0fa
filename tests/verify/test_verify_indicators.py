"""Which group a 0/1 mark counts, against the group the question counts (no kernel)."""

from __future__ import annotations

import pytest

from stateguard.kernel import ProbeResult
from stateguard.verify.indicators import (
    Indicator,
    MarkedColumn,
    asked_groups,
    inverted,
    inverted_marks,
    marked_columns,
    names_category,
)


def test_the_marked_columns_read_one_other_column_of_the_same_frame() -> None:
    code = (
        "users['g'] = users['gender'].apply(f)\n"
        "users['h'] = (users.gender == 'M').astype(int)\n"
        "users['w'] = np.where(users.gender == 'F', 1, np.nan)\n"
        "users['both'] = users.a + users.b\n"  # two columns: not a mark of one
        "users['x'] = other.gender.map(d)\n"  # another frame's column
        "users['y'] = users.assign(z=1).z\n"  # no column of users read by name
    )
    found = {(m.column, m.source) for m in marked_columns(code)}
    assert found == {("g", "gender"), ("h", "gender"), ("w", "gender")}
    assert marked_columns("users[") == []


@pytest.mark.parametrize(
    ("question", "groups"),
    [
        ("Discover the Male percentage (0-100) per occupation", ["Male"]),
        ("What is the share of women among voters?", ["women"]),
        ("How many smokers are there?", ["smokers"]),
        ("What percentage of the passengers survived?", ["passengers"]),
        ("What is the total of sales?", []),
        ("How many unique smokers are there?", ["smokers"]),
        ("How many times did it rain?", []),
    ],
)
def test_the_group_is_the_word_a_share_or_count_phrase_is_about(
    question: str, groups: list[str]
) -> None:
    assert asked_groups(question) == groups


@pytest.mark.parametrize(
    ("word", "category", "named"),
    [
        ("Male", "M", True),
        ("males", "male", True),
        ("women", "F", False),
        ("most", "Mo", True),
        ("Male", "Mx", False),
        ("Male", "1", False),
        ("M", "M", True),
    ],
)
def test_a_category_is_named_by_its_word_or_a_short_abbreviation(
    word: str, category: str, named: bool
) -> None:
    assert names_category(word, category) is named


def _mark(ones: tuple[str, ...], zeros: tuple[str, ...]) -> Indicator:
    marked = MarkedColumn(frame="u", column="g", source="gender", code="u['g'] = …")
    return Indicator(marked=marked, ones=ones, zeros=zeros)


def test_a_mark_is_inverted_only_when_the_asked_group_alone_is_zero() -> None:
    q = "Discover the Male percentage per occupation"
    found = inverted(q, _mark(("F",), ("M",)))
    assert found is not None and "marks 'M' with 0 and 'F' with 1" in found
    assert inverted(q, _mark(("M",), ("F",))) is None
    assert inverted(q, _mark(("M", "F"), ())) is None  # every group marked 1: not inverted
    assert inverted(q, _mark(("X",), ("Y",))) is None  # the question names neither
    assert inverted("What is the mean mark?", _mark(("F",), ("M",))) is None


def test_no_probe_runs_when_the_question_counts_no_group() -> None:
    calls: list[str] = []

    def probe(cell: str, timeout: float = 0) -> ProbeResult:
        calls.append(cell)
        return ProbeResult(
            status="ok", stdout='[["u", "g", "gender", ["F"], ["M"]]]\n', wall_time=0.0
        )

    code = "u['g'] = u.gender.map({'F': 1, 'M': 0})"
    assert inverted_marks(probe, "What is the mean mark?", code) == []
    assert calls == []
    found = inverted_marks(probe, "What is the Male percentage?", code)
    assert len(found) == 1 and len(calls) == 1


def test_a_forged_probe_output_is_ignored() -> None:
    def probe(cell: str, timeout: float = 0) -> ProbeResult:
        return ProbeResult(status="ok", stdout='[["u", "g"]]\n', wall_time=0.0)

    code = "u['g'] = u.gender.map({'F': 1, 'M': 0})"
    assert inverted_marks(probe, "What is the Male percentage?", code) == []
