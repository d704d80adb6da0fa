"""Graders on hostile answers: no grader raises, and the linear rewrites match the originals.

Timing is checked by ``benchmarks/grading_scaling.py`` (n and 10n side by side), not here.
"""

from __future__ import annotations

import re

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from stateguard.bench.judges.infiagent import judge_infiagent, parse_infiagent_answer
from stateguard.bench.judges.longds import judge_longds
from stateguard.worker.grading import grade

_ORIGINAL = re.compile(r"@(\w+)\[(.*?)\]", re.DOTALL)
HUGE_INTEGER = "7" * 40_000  # past Python's 4,300-digit limit for int(str)


@seed(20261201)
@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="@ab_1[] \n", max_size=60))
def test_infiagent_parser_finds_what_the_original_pattern_found(text: str) -> None:
    assert parse_infiagent_answer(text) == dict(_ORIGINAL.findall(text))


def test_unclosed_sub_answers_are_no_sub_answers() -> None:
    assert parse_infiagent_answer("@x[" * 20_000) == {}
    assert parse_infiagent_answer("@x[" * 1000 + "@mean[2.5]") == {"x": "@x[" * 999 + "@mean[2.5"}
    assert judge_infiagent({"mean": "2.5"}, "@mean[2.5] " + "@x[" * 20_000).correct


def test_a_huge_integer_answer_is_judged_not_raised() -> None:
    assert judge_longds({"n": 12}, HUGE_INTEGER).correct is False
    assert judge_longds("north", HUGE_INTEGER).correct is False
    assert judge_longds(["a", "b"], HUGE_INTEGER).correct is False
    assert grade(HUGE_INTEGER, 7).correct is False
    assert grade(HUGE_INTEGER, {"n": 7}).correct is False
