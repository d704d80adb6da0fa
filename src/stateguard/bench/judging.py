"""The LLM judge in benchmark runs: which recorded turns it scores, and how.

`TurnJudge` is applied by the runner to every turn a task job records:

- ``judge="deterministic"``: nothing changes. A LongDS turn the deterministic rules
  left open (``correct`` None on a scored turn) is marked ``undecided``.
- ``judge="llm"``: the LLM judge scores the answer text of every non-skipped LongDS turn
  (the benchmark's own protocol); its verdict replaces the deterministic one.
- ``judge="hybrid"``: only turns the deterministic rules left undecided go to it.

The LLM judge is `AnswerJudge` over any chat model (OpenAI-compatible endpoints in
practice), with the prompt from ``judge_prompt_file`` or the shipped default. A reply
without a parseable score leaves the turn excluded, counted in ``judge_unparseable``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from stateguard.bench.judges.llm_answer import AnswerJudge
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.bench.tasks import BenchTask
from stateguard.llm import ChatModel

TEXT_SUITES = ("longds",)


def build_judge_model(config: RunConfig) -> ChatModel:
    """The judge's chat model: ``judge_llm_overrides`` over the run's model settings."""
    from stateguard.llm import UsageMeter, build_model, load_model_config

    overrides = {**config.llm_overrides, **config.judge_llm_overrides}
    cfg_file = Path(config.llm_config_file) if config.llm_config_file else None
    return build_model(load_model_config(overrides, cfg_file), meter=UsageMeter())


class TurnJudge:
    """Re-judges recorded turns per ``config.judge`` (see the module docstring)."""

    def __init__(
        self, config: RunConfig, model_factory: Callable[[RunConfig], ChatModel] | None = None
    ) -> None:
        self.config = config
        self.model_factory = model_factory or build_judge_model
        self._judge: AnswerJudge | None = None

    @property
    def answer_judge(self) -> AnswerJudge:
        """The LLM judge, built on first use."""
        if self._judge is None:
            model = self.model_factory(self.config)
            if self.config.judge_prompt_file:
                self._judge = AnswerJudge.from_file(model, self.config.judge_prompt_file)
            else:
                self._judge = AnswerJudge(model)
        return self._judge

    def apply(self, task: BenchTask, payload: dict[str, Any]) -> dict[str, Any]:
        """The turn payload with the configured judge's verdict."""
        if task.suite not in TEXT_SUITES or payload.get("skipped"):
            return payload
        result = TurnResult.model_validate(payload)
        undecided = result.correct is None
        mode = self.config.judge
        if mode == "deterministic" or (mode == "hybrid" and not undecided):
            return result.model_copy(update={"undecided": undecided}).model_dump()
        turn = task.turns[result.turn_id - 1]
        verdict = self.answer_judge.judge_turn(turn, result.answer)
        reason = verdict.details.get("reason")
        update: dict[str, Any] = {
            "correct": None if verdict.excluded else verdict.correct,
            "score": None if verdict.excluded else verdict.score,
            "judged_by": "llm",
            "undecided": False,
            "judge_reason": reason or (None if verdict.correct else "llm judge: score 0"),
            "llm_calls": result.llm_calls,
        }
        return result.model_copy(update=update).model_dump()

    @property
    def unparseable(self) -> int:
        """Turns the LLM judge could not score."""
        return 0 if self._judge is None else self._judge.unparseable
