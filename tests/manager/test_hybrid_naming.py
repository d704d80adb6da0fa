"""The hybrid policy names states from the evidence; the LLM only where it is ambiguous."""

from __future__ import annotations

from stateguard.checks import Step
from stateguard.kernel import ExecutionResult
from stateguard.lineage import LineageGraph
from stateguard.llm import ScriptedModel
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.policies.hybrid import (
    HybridPolicy,
    deterministic_name,
    issue_line,
    printed_values,
)

NAMED = '{"issue": "named by the model", "conclusions": ["from the model"]}'


def _step(step: int, stdout: str, *, ok: bool = True) -> Step:
    execution = ExecutionResult(status="ok", stdout=stdout, wall_time=0.01)
    if not ok:
        execution = ExecutionResult.model_validate(
            {
                "status": "error",
                "stdout": stdout,
                "wall_time": 0.01,
                "error": {"ename": "KeyError", "evalue": "'x'", "traceback": []},
            }
        )
    return Step(turn=0, step=step, code="print(1)", execution=execution)


def _ctx(question: str, steps: tuple[Step, ...], answer: str | None) -> PolicyContext:
    def no_probe(code: str):
        raise AssertionError("naming must not probe")

    def no_state(state_id: str):
        raise AssertionError("naming must not load states")

    return PolicyContext(
        graph=LineageGraph(),
        probe=no_probe,
        committed=(),
        load_state=no_state,
        steps=steps,
        turn_steps=steps,
        pending_steps=(),
        question=question,
        answer=answer,
        draft=None,
    )


def _obs(question: str, answer: str | None) -> Observation:
    return Observation(event="review", turn=0, question=question, answer=answer)


def test_issue_is_the_question_or_its_first_sentence() -> None:
    assert issue_line("  How many   orders are there? ") == "How many orders are there?"
    long = "Group the orders by region and sum the margin. " + "Then explain it. " * 12
    assert issue_line(long) == "Group the orders by region and sum the margin."
    assert issue_line("   ") == ""


def test_conclusions_are_the_answer_and_printed_values() -> None:
    steps = (
        _step(0, "loaded\n1200\n"),
        _step(1, "total: 209637.41\n"),
        _step(2, "margin: 999\n", ok=False),
    )
    assert printed_values(steps) == ["1200", "total: 209637.41"]
    issue, conclusions = deterministic_name("What is the total?", "209637.41", steps)
    assert issue == "What is the total?"
    # the printed line holding the answer is not repeated; the failed cell's output is not used
    assert conclusions == ("209637.41", "printed: 1200")


def test_no_llm_call_when_the_question_names_the_state() -> None:
    model = ScriptedModel(lambda messages: NAMED)
    policy = HybridPolicy(model)
    steps = (_step(0, "4\n"),)
    name = policy.name_state(
        _obs("How many orders?", "4 orders"), _ctx("How many orders?", steps, "4")
    )
    assert name == ("How many orders?", ("4 orders",))
    assert policy.llm_calls == 0 and model.requests == []


def test_llm_names_a_state_whose_question_is_blank() -> None:
    model = ScriptedModel(lambda messages: NAMED)
    policy = HybridPolicy(model)
    name = policy.name_state(_obs("", "4 orders"), _ctx("", (), "4 orders"))
    assert name == ("named by the model", ("from the model",))
    assert policy.llm_calls == 1 and policy.calls_by_turn == {0: 1}


def test_blank_question_without_a_model_keeps_the_deterministic_name() -> None:
    policy = HybridPolicy(None)
    assert policy.name_state(_obs("", "4 orders"), _ctx("", (), "4 orders")) == (
        "(no question)",
        ("4 orders",),
    )


def test_naming_llm_calls_once_per_answered_state() -> None:
    model = ScriptedModel(lambda messages: NAMED)
    policy = HybridPolicy(model, naming="llm")
    ctx = _ctx("How many orders?", (), "4")
    assert policy.name_state(_obs("How many orders?", "4"), ctx)[0] == "named by the model"
    assert policy.name_state(_obs("How many orders?", None), ctx)[0] == "How many orders?"
    assert policy.llm_calls == 1
