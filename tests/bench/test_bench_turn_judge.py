"""Which recorded turns the configured judge re-scores (no kernel: payloads by hand)."""

from __future__ import annotations

from stateguard.bench.judging import TurnJudge
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.llm import ScriptedModel

TASK = BenchTask(
    task_id="d/s/task1",
    suite="longds",
    domain="d",
    turns=(
        BenchTurn(turn_id=1, context="c1", question="Total?", gold=5),
        BenchTurn(turn_id=2, question="Top?", gold="A"),
    ),
)


def _payload(turn_id: int, correct: bool | None, answer: str | None = "x", **kw) -> dict:
    return TurnResult(
        task_id=TASK.task_id, turn_id=turn_id, n_turns=2, correct=correct, answer=answer, **kw
    ).model_dump()


def _judge(mode: str, replies: list[str]) -> tuple[TurnJudge, ScriptedModel]:
    model = ScriptedModel(replies)
    config = RunConfig(suite="longds", path="/nowhere", judge=mode)  # type: ignore[arg-type]
    return TurnJudge(config, model_factory=lambda _: model), model


def test_deterministic_marks_undecided_only() -> None:
    judge, model = _judge("deterministic", [])
    out = TurnResult.model_validate(judge.apply(TASK, _payload(1, None)))
    assert out.undecided and out.correct is None and out.judged_by is None
    assert not TurnResult.model_validate(judge.apply(TASK, _payload(2, True))).undecided
    assert model.requests == []


def test_hybrid_scores_only_undecided_turns() -> None:
    judge, model = _judge("hybrid", ["<score>1</score>"])
    decided = TurnResult.model_validate(judge.apply(TASK, _payload(2, False)))
    assert decided.correct is False and decided.judged_by is None
    undecided = TurnResult.model_validate(judge.apply(TASK, _payload(1, None, "It is 5.")))
    assert undecided.correct is True and undecided.judged_by == "llm" and not undecided.undecided
    (request,) = model.requests
    assert "c1\nQuestion: Total?" in request.messages[0].content


def test_llm_scores_every_answer_and_skips_skipped_turns() -> None:
    judge, model = _judge("llm", ["<score>0</score>", "<score>1</score>"])
    first = TurnResult.model_validate(judge.apply(TASK, _payload(1, True)))
    assert first.correct is False and first.judged_by == "llm"  # the LLM verdict replaces
    empty = TurnResult.model_validate(judge.apply(TASK, _payload(2, None, answer=None)))
    assert empty.correct is False and empty.score == 0.0  # empty solution: 0, no call
    skipped = judge.apply(TASK, _payload(2, None, skipped=True))
    assert skipped["judged_by"] is None and len(model.requests) == 1


def test_other_suites_are_left_alone() -> None:
    judge, _ = _judge("llm", [])
    dseval = TASK.model_copy(update={"suite": "dseval"})
    assert judge.apply(dseval, _payload(1, None)) == _payload(1, None)
