"""InfiAgent-DABench sub-answer parsing and judging."""

from __future__ import annotations

import pytest

from stateguard.bench.judges import judge_infiagent, parse_infiagent_answer, sub_answer_equal


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@mean_fare[34.65]", {"mean_fare": "34.65"}),
        ("The answer is @a[1] and @b[ yes ].", {"a": "1", "b": " yes "}),
        ("@a[1]\n@a[2]", {"a": "2"}),  # repeated name: last wins
        ("@list[[1, 2]]", {"list": "[1, 2"}),  # benchmark pattern stops at the first ']'
        ("@multi[line\nvalue]", {"multi": "line\nvalue"}),
        ("no answers here", {}),
        ("@bad name[1] @ok[2]", {"ok": "2"}),
        ("", {}),
    ],
)
def test_parse(text: str, expected: dict[str, str]) -> None:
    assert parse_infiagent_answer(text) == expected


@pytest.mark.parametrize(
    ("pred", "gold", "equal"),
    [
        ("34.65", "34.65", True),
        (" 34.65 ", "34.65", True),
        ("34.650", "34.65", True),
        ("34.6500001", "34.65", True),
        ("34.66", "34.65", False),
        ("1e-3", "0.001", True),
        ("yes", "yes", True),
        ("Yes", "yes", False),
        ("significant", "non-significant", False),
        ("nan", "0.5", False),
    ],
)
def test_sub_answer_equal(pred: str, gold: str, equal: bool) -> None:
    assert sub_answer_equal(pred, gold) is equal


def test_all_sub_answers_must_be_right() -> None:
    gold = {"mean_fare_child": "31.09", "mean_fare_adult": "35.17"}
    right = judge_infiagent(gold, "@mean_fare_child[31.09], @mean_fare_adult[35.170] extra @x[1]")
    assert right.correct and right.score == 1.0
    half = judge_infiagent(gold, "@mean_fare_child[31.09] @mean_fare_adult[35.2]")
    assert not half.correct and half.score == 0.5
    assert half.details["sub_answers"]["mean_fare_adult"] == {
        "predicted": "35.2",
        "gold": "35.17",
        "correct": False,
    }
    missing = judge_infiagent(gold, "@mean_fare_child[31.09]")
    assert (
        not missing.correct
        and missing.details["sub_answers"]["mean_fare_adult"]["predicted"] is None
    )
