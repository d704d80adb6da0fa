"""Score parsing and the multi-round LLM layer, with scripted models (no kernel)."""

from __future__ import annotations

import pytest
from steps import FakeEnv, answer, failed, ok

from stateguard.errors import ModelError
from stateguard.kernel import ProbeResult
from stateguard.llm import ScriptedModel
from stateguard.verify import StepVerifier, VerifyTask, parse_verifier_reply

TASK = VerifyTask(question="How many orders are from 2024?")


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("<score>1</score><summary>fine</summary>", 1.0),
        ("<score> 0.5 </score>", 0.5),
        ("<score>0</score><summary>wrong filter</summary>", 0.0),
        ("<score>1.0</score>", 1.0),
    ],
)
def test_valid_scores_parse(text: str, score: float) -> None:
    reply = parse_verifier_reply(text)
    assert (reply.kind, reply.score) == ("conclusion", score)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<score>0.7</score>", "score_out_of_range"),
        ("<score>2</score>", "score_out_of_range"),
        ("<score>high</score>", "unparseable_score"),
        ("<score>1</score><score>0</score>", "unparseable_score"),
        ("looks right to me", "unparseable_score"),
        ("", "unparseable_score"),
        ("```python\na\n```\n```python\nb\n```", "unparseable_score"),
    ],
)
def test_anything_else_is_invalid_never_coerced(text: str, reason: str) -> None:
    reply = parse_verifier_reply(text)
    assert (reply.kind, reply.invalid, reply.score) == ("invalid", reason, None)


def test_one_code_block_is_a_probe() -> None:
    reply = parse_verifier_reply("Let me check.\n```python\nlen(df)\n```")
    assert (reply.kind, reply.code) == ("probe", "len(df)\n")


def _hybrid(replies, **kw) -> tuple[StepVerifier, ScriptedModel]:
    model = ScriptedModel(replies, name="verifier")
    return StepVerifier("hybrid", model=model, **kw), model


def test_decisive_evidence_never_reaches_the_model() -> None:
    verifier, model = _hybrid([])
    v = verifier.verify(TASK, [failed("df['yr']", "KeyError", "'yr'"), ok("len(df)", "3")], 0)
    assert (v.score, v.layer, model.requests) == (0.5, "deterministic", [])


def test_the_model_probes_the_environment_then_concludes() -> None:
    env = FakeEnv(lambda code: ProbeResult(status="ok", result="17", wall_time=0.0))
    verifier, model = _hybrid(
        [
            "```python\n(df.year == 2024).sum()\n```",
            "<score>0</score><summary>the filter keeps 12 rows, the data has 17</summary>",
        ]
    )
    step = ok("n = len(df[df.year > 2024])", stdout="12", thought="count 2024 orders")
    v = verifier.verify(TASK, [step], env=env)
    assert (v.score, v.layer, v.rounds) == (0.0, "llm", 2)
    assert v.rationale == "the filter keeps 12 rows, the data has 17"
    assert env.codes == ["(df.year == 2024).sum()\n"]
    assert model.requests[1].messages[-1].content == "Output:\n17"
    assert any(e.check == "probe" for e in v.evidence)


def test_an_unparseable_score_is_an_invalid_verdict() -> None:
    verifier, _ = _hybrid(["I think it is mostly right"])
    v = verifier.verify(TASK, [ok("x = 1")])
    assert (v.score, v.invalid, v.valid) == (None, "unparseable_score", False)
    assert "mostly right" in v.invalid_detail


def test_rounds_are_bounded() -> None:
    verifier, model = _hybrid(["```python\n1\n```"] * 10, max_rounds=2)
    v = verifier.verify(TASK, [ok("x = 1")], env=FakeEnv())
    assert v.invalid == "rounds_exhausted"
    assert len(model.requests) == 3


def test_a_failing_model_is_an_invalid_verdict_not_a_crash() -> None:
    verifier, _ = _hybrid([ModelError("endpoint down")])
    v = verifier.verify(TASK, [ok("x = 1")])
    assert (v.invalid, v.invalid_detail) == ("model_error", "endpoint down")


def test_earlier_verdicts_are_in_the_history_and_the_final_step_rule_applies() -> None:
    verifier, model = _hybrid(["<score>1</score><summary>ok</summary>"] * 3)
    steps = [ok("n = (df.year == 2024).sum()\nn", result="17"), answer("17 orders")]
    verdicts = verifier.verify_all(TASK, steps)
    assert [v.score for v in verdicts] == [1.0, 1.0]
    last = model.requests[-1].messages
    assert "earlier verdict 1: ok" in last[1].content
    assert "final step of the turn" in last[0].content
    assert "final step of the turn" not in model.requests[0].messages[0].content


def test_without_an_environment_a_probe_request_is_told_so() -> None:
    verifier, model = _hybrid(["```python\nlen(df)\n```", "<score>0.5</score>"])
    v = verifier.verify(TASK, [ok("x = 1")])
    assert v.score == 0.5
    assert "no live environment" in model.requests[1].messages[-1].content


def test_the_llm_mode_sees_the_rules_findings_as_facts() -> None:
    model = ScriptedModel(["<score>0.5</score><summary>exploring</summary>"])
    v = StepVerifier("llm", model=model).verify(TASK, [failed("df['yr']", "KeyError", "'yr'")])
    assert (v.score, v.layer) == (0.5, "llm")
    assert "grounding_error (doubt): KeyError" in model.requests[0].messages[1].content
