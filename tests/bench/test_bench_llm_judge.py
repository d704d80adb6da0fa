"""LLM judge: prompt from package data, verdict parsing, bounded retries, exclusion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from stateguard.bench.judges import LLMJudge, judge_longds, parse_verdict
from stateguard.bench.judges.llm import load_prompt_sections


@dataclass
class Reply:
    content: str | None


@dataclass
class FakeModel:
    """Replays canned replies and records what it was sent."""

    replies: list[str | None]
    sent: list[list[dict[str, str]]] = field(default_factory=list)
    kwargs: list[dict[str, Any]] = field(default_factory=list)

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> Reply:
        self.sent.append(messages)
        self.kwargs.append(kwargs)
        return Reply(self.replies[len(self.sent) - 1])


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
    model = FakeModel(["VERDICT: 1"])
    judge = LLMJudge(model, temperature=0)
    judgement = judge.judge(
        "Why did sales drop?", "Returns were refunded", "refunds of returns", field="why"
    )
    assert judgement.correct and not judgement.excluded
    assert judge.calls == 1 and judge.excluded == 0
    user = model.sent[0][1]["content"]
    assert "Why did sales drop?" in user and "refunds of returns" in user and "why" in user
    assert model.sent[0][0]["role"] == "system"
    assert model.kwargs[0] == {"temperature": 0}


def test_retries_then_parses() -> None:
    model = FakeModel(["hmm", "VERDICT: 0"])
    judge = LLMJudge(model)
    judgement = judge.judge("q", "gold $5 {x}", {"a": 1})
    assert not judgement.correct and not judgement.excluded
    assert judgement.details["llm_calls"] == 2 and judge.calls == 2
    retry_messages = model.sent[1]
    assert retry_messages[-2] == {"role": "assistant", "content": "hmm"}
    assert retry_messages[-1]["content"] == load_prompt_sections()["retry"]
    assert "gold $5 {x}" in model.sent[0][1]["content"]  # substitution is literal-safe


def test_unparseable_after_retries_is_excluded_and_counted() -> None:
    model = FakeModel(["no", "still no", "nope", "never called"])
    judge = LLMJudge(model, max_retries=2)
    judgement = judge.judge("q", "a", "b")
    assert judgement.excluded and not judgement.correct
    assert judge.calls == 3 and judge.excluded == 1 and len(model.sent) == 3
    assert judgement.details["replies"] == ["no", "still no", "nope"]


def test_longds_uses_llm_only_for_failed_free_text() -> None:
    model = FakeModel(["VERDICT: 1"])
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
    judge = LLMJudge(FakeModel(["?", "?", "?"]))
    judgement = judge_longds(
        {"why": "because the data were stale"}, {"why": "no idea at all"}, llm_judge=judge
    )
    assert judgement.excluded and not judgement.correct
