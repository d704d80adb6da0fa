"""The LLM judge in benchmark runs: which recorded turns it scores, and how.

`TurnJudge` is applied by the runner to every turn a task job records:

- ``judge="deterministic"``: nothing changes. A LongDS turn the deterministic rules
  left open (``correct`` None on a scored turn) is marked ``undecided``.
- ``judge="llm"``: the LLM judge scores the answer text of every non-skipped LongDS turn
  (the benchmark's own protocol); its verdict replaces the deterministic one.
- ``judge="hybrid"``: only turns the deterministic rules left undecided go to it.

`rejudge_run` applies the same to a finished run directory (``bench report --judge``),
rewriting its recorded verdicts.

The LLM judge is `AnswerJudge` over any chat model (OpenAI-compatible endpoints in
practice), with the prompt from ``judge_prompt_file`` or the shipped default. A reply
without a parseable score leaves the turn excluded, counted in ``judge_unparseable``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from stateguard.bench.judges.llm_answer import AnswerJudge
from stateguard.bench.loaders import load_suite
from stateguard.bench.records import RunConfig, RunStore, TurnResult
from stateguard.bench.tasks import BenchTask
from stateguard.errors import StateguardError
from stateguard.llm import ChatModel, UsageMeter, build_model, load_model_config

TEXT_SUITES = ("longds", "kramabench")


def build_judge_model(config: RunConfig) -> ChatModel:
    """The judge's chat model: ``judge_llm_overrides`` over the run's model settings."""
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
        turn = task.turns[result.turn_id - 1]
        if task.suite == "kramabench" and turn.gold is None:  # a step without gold: unjudged
            return result.model_copy(update={"undecided": False}).model_dump()
        undecided = result.correct is None
        mode = self.config.judge
        if mode == "deterministic" or (mode == "hybrid" and not undecided):
            return result.model_copy(update={"undecided": undecided}).model_dump()
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


def rejudge_run(
    run_dir: Path | str,
    judge: str,
    *,
    judge_llm_overrides: dict[str, Any] | None = None,
    judge_prompt_file: str | None = None,
    model_factory: Callable[[RunConfig], ChatModel] | None = None,
) -> dict[str, int]:
    """Re-judge the recorded LongDS turns of a run with ``judge`` (``llm`` or ``hybrid``).

    The tasks are reloaded from the run's settings; verdicts in ``turns.jsonl`` are
    replaced (each turn stays recorded once). Returns counts: ``judged`` (turns sent to
    the LLM judge) and ``unparseable``.
    """
    if judge not in ("llm", "hybrid"):
        raise StateguardError(f"--judge for a finished run must be llm or hybrid, got {judge!r}")
    store = RunStore(run_dir)
    config = store.config()
    if config.suite not in TEXT_SUITES:
        raise StateguardError(
            f"the LLM judge scores text answers ({TEXT_SUITES}), not {config.suite}"
        )
    update: dict[str, Any] = {"judge": judge}
    if judge_llm_overrides:
        update["judge_llm_overrides"] = judge_llm_overrides
    if judge_prompt_file:
        update["judge_prompt_file"] = judge_prompt_file
    config = config.model_copy(update=update)
    loaded = load_suite(
        config.suite,
        config.path,
        start_index=config.start_index,
        task_limit=config.limit,
        turn_limit=config.turn_limit,
        path_maps=config.path_maps,
        lake=config.lake,
    )
    tasks = {t.task_id: t for t in loaded.tasks}
    turn_judge = TurnJudge(config, model_factory)
    results: list[TurnResult] = []
    judged = 0
    for result in store.results():
        task = tasks.get(result.task_id)
        if task is None or result.turn_id > len(task.turns) or result.judged_by == "llm":
            results.append(result)
            continue
        new = TurnResult.model_validate(turn_judge.apply(task, result.model_dump()))
        judged += new.judged_by == "llm"
        results.append(new)
    store.rewrite_turns(results)
    return {"judged": judged, "unparseable": turn_judge.unparseable}
