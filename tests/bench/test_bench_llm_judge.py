"""LLM judge: prompt from package data, verdict parsing, bounded retries, exclusion.

The judge takes any `stateguard.llm.ChatModel`: a `ScriptedModel`, and the
OpenAI-compatible client against a fake server on loopback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stateguard.bench.judges import LLMJudge, judge_longds, parse_verdict
from stateguard.bench.judges.llm import load_prompt_sections
from stateguard.llm import ChatMessage, OpenAIChatModel, ScriptedModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import FakeOpenAIServer


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Same meaning.\nVERDICT: 1", True),
        ("Different.\nVERDICT: 0", False),
        ("verdict:1", True),
        ("**VERDICT: 0**", False),
        ("VERDICT: 1 ... on reflection VERDICT: 0", False),
        ("I think they match", None),
        ("VERDICT: 2", None),
        (None, None),
    ],
)
def test_parse_verdict(reply: str | None, verdict: bool | None) -> None:
    assert parse_verdict(reply) is verdict


def test_prompt_is_package_data_with_placeholders() -> None:
    sections = load_prompt_sections()
    assert set(sections) == {"system", "user", "retry"}
    for name in ("$question", "$gold", "$prediction", "$field"):
        assert name in sections["user"]
    assert "VERDICT" in sections["system"]


def test_first_reply_parsed() -> None:
    model = ScriptedModel(["VERDICT: 1"])
    judge = LLMJudge(model, max_tokens=16)
    judgement = judge.judge(
        "Why did sales drop?", "Returns were refunded", "refunds of returns", field="why"
    )
    assert judgement.correct and not judgement.excluded
    assert judge.calls == 1 and judge.excluded == 0
    (request,) = model.requests
    system, user = request.messages
    assert system.role == "system" and user.role == "user"
    assert "Why did sales drop?" in user.content and "refunds of returns" in user.content
    assert "why" in user.content
    assert request.max_tokens == 16


def test_judge_through_the_openai_client_on_a_loopback_server() -> None:
    with FakeOpenAIServer(["Both say refunds.\nVERDICT: 1", "VERDICT: 0"]) as server:
        model = OpenAIChatModel("judge-model", base_url=server.base_url)
        judge = LLMJudge(model, temperature=0.0)
        same = judge.judge("Why?", "refunds of returns", "returns were refunded")
        other = judge.judge("Why?", "refunds of returns", "a holiday")
        bodies = server.bodies
    assert same.correct and not other.correct and judge.calls == 2
    assert bodies[0]["model"] == "judge-model"
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "user"]
    assert "returns were refunded" in bodies[0]["messages"][1]["content"]


def test_retries_then_parses() -> None:
    model = ScriptedModel(["hmm", "VERDICT: 0"])
    judge = LLMJudge(model)
    judgement = judge.judge("q", "gold $5 {x}", {"a": 1})
    assert not judgement.correct and not judgement.excluded
    assert judgement.details["llm_calls"] == 2 and judge.calls == 2
    retry_messages = model.requests[1].messages
    assert retry_messages[-2] == ChatMessage.assistant("hmm")
    assert retry_messages[-1] == ChatMessage.user(load_prompt_sections()["retry"])
    assert "gold $5 {x}" in model.requests[0].messages[1].content  # literal-safe


def test_unparseable_after_retries_is_excluded_and_counted() -> None:
    model = ScriptedModel(["no", "still no", "nope", "never called"])
    judge = LLMJudge(model, max_retries=2)
    judgement = judge.judge("q", "a", "b")
    assert judgement.excluded and not judgement.correct
    assert judge.calls == 3 and judge.excluded == 1 and model.remaining == 1
    assert judgement.details["replies"] == ["no", "still no", "nope"]


def test_longds_uses_llm_only_for_failed_free_text() -> None:
    model = ScriptedModel(["VERDICT: 1"])
    judge = LLMJudge(model)
    gold = {"reason": "returned orders were counted as revenue", "n": 2}
    judgement = judge_longds(
        gold,
        {"reason": "revenue wrongly included the refunded returns", "n": 2},
        llm_judge=judge,
        question="What went wrong?",
    )
    assert judgement.correct and judge.calls == 1
    # a deterministic match needs no model call; a short string is never sent
    judge_longds({"reason": gold["reason"]}, {"reason": gold["reason"].upper()}, llm_judge=judge)
    judge_longds({"region": "West"}, {"region": "East"}, llm_judge=judge)
    assert judge.calls == 1


def test_longds_excluded_when_llm_cannot_decide() -> None:
    judge = LLMJudge(ScriptedModel(["?", "?", "?"]))
    judgement = judge_longds(
        {"why": "because the data were stale"}, {"why": "no idea at all"}, llm_judge=judge
    )
    assert judgement.excluded and not judgement.correct
