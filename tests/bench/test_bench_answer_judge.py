"""The whole-answer LLM judge: template placeholders, gold rendering, score parsing, retries."""

from __future__ import annotations

import pytest

from stateguard.bench.judges.llm_answer import (
    AnswerJudge,
    default_template,
    judge_question,
    parse_score,
    render_gold,
)
from stateguard.bench.tasks import BenchTurn
from stateguard.errors import TaskFormatError
from stateguard.llm import ScriptedModel


def _text(request) -> str:
    (message,) = request.messages
    assert message.role == "user"
    return message.content


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("fine <score>1</score>", 1.0),
        ("<score> 0 </score>", 0.0),
        ("<SCORE>1</SCORE> then <score>0</score>", 0.0),
        ("<score>0.5</score>", 0.5),
        ("score: 1", None),
        ("", None),
    ],
)
def test_parse_score(reply: str, score: float | None) -> None:
    assert parse_score(reply) == score


def test_prompt_carries_context_question_gold_and_solution() -> None:
    model = ScriptedModel(["Same value. <score>1</score>"])
    judge = AnswerJudge(model)
    turn = BenchTurn(
        turn_id=2, context="Returns count as zero.", question="Net revenue?", gold={"net": 150}
    )
    verdict = judge.judge_turn(turn, "The net revenue is 150.")
    assert verdict.correct and verdict.score == 1.0 and not verdict.excluded
    text = _text(model.requests[0])
    assert "Returns count as zero.\nQuestion: Net revenue?" in text
    assert '{"net": 150}' in text and "The net revenue is 150." in text
    assert not any(p in text for p in ("{question}", "{ground_truth}", "{solution}"))


def test_gold_rendering() -> None:
    assert render_gold({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert render_gold([1, 2]) == "[1, 2]" and render_gold(3.5) == "3.5"
    assert render_gold("South") == "South"
    assert judge_question(BenchTurn(turn_id=1, question="q?")) == "\nQuestion: q?"


def test_retries_then_excluded_and_counted() -> None:
    model = ScriptedModel(["no score", "still none", "nope", "never"])
    judge = AnswerJudge(model, max_retries=3)
    verdict = judge.judge("q", 1, "1")
    assert verdict.excluded and not verdict.correct
    assert judge.calls == 4 and judge.unparseable == 1 and len(model.requests) == 4


def test_retry_succeeds() -> None:
    model = ScriptedModel(["hmm", "<score>0</score>"])
    judge = AnswerJudge(model)
    verdict = judge.judge("q", 1, "2")
    assert not verdict.correct and not verdict.excluded and judge.calls == 2


def test_empty_solution_scores_zero_without_a_call() -> None:
    model = ScriptedModel([])
    judge = AnswerJudge(model)
    for empty in (None, "", "   "):
        verdict = judge.judge("q", 1, empty)
        assert verdict.score == 0.0 and not verdict.correct and not verdict.excluded
    assert model.requests == []


def test_template_from_file_keeps_other_braces(tmp_path) -> None:
    path = tmp_path / "official.txt"
    path.write_text('Q: {question}\nGT: {ground_truth}\nA: {solution}\nReply like {"x": 1}')
    model = ScriptedModel(["<score>1</score>"])
    AnswerJudge.from_file(model, path).judge("q", {"x": 1}, "x is 1")
    assert _text(model.requests[0]) == 'Q: q\nGT: {"x": 1}\nA: x is 1\nReply like {"x": 1}'


def test_template_without_placeholders_rejected(tmp_path) -> None:
    with pytest.raises(TaskFormatError, match="solution"):
        AnswerJudge(ScriptedModel([]), "{question} {ground_truth}")
    with pytest.raises(TaskFormatError, match="cannot read"):
        AnswerJudge.from_file(ScriptedModel([]), tmp_path / "missing.txt")
    assert all(p in default_template() for p in ("{question}", "{ground_truth}", "{solution}"))
