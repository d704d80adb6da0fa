"""Comparisons whose outcome the column's type fixes (text vs number, number vs string)."""

from __future__ import annotations

import pytest
from steps import FakeEnv, kinds_env, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.typedcompare import fixed_by_type, typed_comparisons

KINDS = [
    ["chipo", "choice_description", "text"],
    ["chipo", "quantity", "number"],
    ["vol", "year", "number"],
    ["vol", "when", "other"],
]


def _env(kinds: list[list[str]] = KINDS) -> FakeEnv:
    return kinds_env(kinds)


def test_comparisons_with_constants_are_read_from_either_side() -> None:
    found = typed_comparisons("a = df[df.x != 1]\nb = df[2015 == df['y']]\nc = df[df.z == True]")
    assert [(c.column, c.value, c.equal) for c in found] == [("x", 1, False), ("y", 2015, True)]
    assert typed_comparisons("def broken(:") == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("chipo[chipo.choice_description != 1]", "holds text, with a number: it is true for every"),
        ("vol[vol.year == '2015']", "holds numbers, with a string: it matches no row"),
    ],
)
def test_a_comparison_the_type_fixes_is_found(code: str, expected: str) -> None:
    (found,) = fixed_by_type(_env().probe, code)
    assert expected in found


@pytest.mark.parametrize(
    "code",
    [
        "chipo[chipo.quantity != 1]",  # a number against numbers
        "chipo[chipo.choice_description != 'Coke']",  # text against text
        "vol[vol.when == '2015-01-01']",  # a kind the probe does not judge (dates)
        "vol[vol.missing == 1]",  # a column the probe does not know
    ],
)
def test_near_misses_are_left_alone(code: str) -> None:
    assert fixed_by_type(_env().probe, code) == []


def test_a_failing_or_forged_probe_says_nothing() -> None:
    failing = FakeEnv(lambda code: ProbeResult(status="error", wall_time=0.0))
    assert fixed_by_type(failing.probe, "chipo[chipo.choice_description != 1]") == []
    forged = FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, stdout="[[1]]"))
    assert fixed_by_type(forged.probe, "chipo[chipo.choice_description != 1]") == []


def test_the_rule_is_zero_in_a_result_step_and_a_doubt_elsewhere() -> None:
    det = StepVerifier("deterministic")
    task = VerifyTask(question="Which products were ordered one at a time?")
    step = ok("chipo[chipo.choice_description != 1]", result="...")
    v = det.verify(task, [step.model_copy(update={"result": True})], env=_env())
    assert v.score == 0.0 and v.evidence[0].check == "type_fixed_comparison", v.rationale
    assert det.verify(task, [step], env=_env()).score == 0.5
