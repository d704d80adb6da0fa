"""One `Step` type: what the worker records, the manager reviews and the verifier scores."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from stateguard.checks import Step
from stateguard.kernel.results import ExecutionResult


def test_each_producer_fills_what_it_knows() -> None:
    bare = Step()
    assert (bare.turn, bare.step, bare.thought, bare.observation) == (0, 0, "", "")
    assert bare.code is None and bare.execution is None and bare.cell is None
    assert bare.answer is None and bare.problem is None
    assert not (bare.setup or bare.final or bare.result)


def test_an_answer_step_runs_no_code() -> None:
    assert Step(answer="5").is_answer
    assert not Step(code="print(5)", answer="5").is_answer
    assert not Step(code="print(5)").is_answer


def test_a_step_is_frozen() -> None:
    step = Step(code="x = 1", execution=ExecutionResult(status="ok", wall_time=0.0))
    with pytest.raises(ValidationError):
        step.code = "x = 2"  # type: ignore[misc]
    assert step.model_copy(update={"final": True}).final
