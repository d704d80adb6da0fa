"""The rewards with the signatures RL trainers call.

* TRL's ``GRPOTrainer(reward_funcs=[...])`` calls each function as
  ``f(prompts=..., completions=..., completion_ids=..., **columns)``, where the
  columns are the dataset's other columns (one value per completion) plus
  ``trainer_state``, ``log_extra`` and ``log_metric``; a completion is a string or,
  for a conversational dataset, a list of messages. It expects one float per
  completion (None for "no reward here").
* VeRL's reward manager calls a custom score function as
  ``compute_score(data_source, solution_str, ground_truth, extra_info=None)`` and
  expects a float.

The manager's dataset carries, per prompt, the activation it was cut from (column
``activation``: a `records.Activation` as a dict or JSON) and optionally what the
replay knows (column ``evidence``: a `validity.RewardEvidence`). The completion is the
policy's reply: one JSON action per assistant message, tool actions first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from stateguard.train.process_reward import RewardError, StepInput, process_reward
from stateguard.train.records import Activation
from stateguard.train.validity import (
    ActivationAttempt,
    RewardEvidence,
    ValidityConfig,
    validity_reward,
)
from stateguard.train.validity_checks import parse_actions

RewardFunc = Callable[..., list[float | None]]


def completion_actions(completion: Any) -> list[dict[str, Any] | str]:
    """The actions of a completion: each assistant message's reply (conversational
    form), or each JSON object of a plain-text completion. Text holding no JSON object
    is kept as one unparseable action, so it counts as a protocol violation."""
    if isinstance(completion, str):
        found = parse_actions(completion)
        return list(found) if found else [completion]
    if isinstance(completion, Sequence):
        out: list[dict[str, Any] | str] = []
        for i, msg in enumerate(completion):
            if not isinstance(msg, dict) or "content" not in msg:
                raise RewardError(f"completion[{i}]: expected a message with 'content'")
            if msg.get("role", "assistant") == "assistant":
                out.append(str(msg["content"]))
        return out
    raise RewardError(f"completion: expected text or a list of messages, got {type(completion)}")


def _model(value: Any, model: type[Any], field: str) -> Any:
    if value is None:
        return None
    if isinstance(value, model):
        return value
    try:
        if isinstance(value, str | bytes):
            return model.model_validate_json(value)
        return model.model_validate(value)
    except ValidationError as exc:
        raise RewardError(f"{field}: not a {model.__name__}: {exc.errors()[0]['msg']}") from None


def score_completion(
    completion: Any,
    activation: Any,
    evidence: Any = None,
    config: ValidityConfig | None = None,
) -> float:
    """The validity reward of one completion at the activation it answers."""
    act = _model(activation, Activation, "activation")
    if act is None:
        raise RewardError("activation: the dataset row has no activation column value")
    attempt = ActivationAttempt(activation=act, actions=tuple(completion_actions(completion)))
    return validity_reward([attempt], _model(evidence, RewardEvidence, "evidence"), config)


def grpo_validity_reward(config: ValidityConfig | None = None) -> RewardFunc:
    """A TRL ``reward_funcs`` entry scoring each completion with the validity reward."""
    cfg = config or ValidityConfig()

    def validity_reward_func(
        prompts: list[Any], completions: list[Any], **kwargs: Any
    ) -> list[float | None]:
        activations = kwargs.get("activation")
        if activations is None:
            raise RewardError("activation: the dataset has no 'activation' column")
        evidences = kwargs.get("evidence") or [None] * len(completions)
        return [
            score_completion(c, a, e, cfg)
            for c, a, e in zip(completions, activations, evidences, strict=True)
        ]

    return validity_reward_func


StepJudge = Callable[[Any, Any], tuple[Sequence[Any], Sequence[StepInput] | None, float]]
"""``judge(prompt, completion) -> (steps, step_verdicts, outcome)``, e.g. running the
completion's code and scoring each step with `stateguard.verify.StepVerifier`."""


def grpo_process_reward(beta: float = 0.5, judge: StepJudge | None = None) -> RewardFunc:
    """A TRL ``reward_funcs`` entry with DataPRM's process reward.

    With ``judge``, each completion's steps, verdicts and outcome come from it; without,
    from the dataset columns ``step_verdicts`` (one list per completion: scores 0, 0.5,
    1 or None) and ``outcome``.
    """

    def process_reward_func(
        prompts: list[Any], completions: list[Any], **kwargs: Any
    ) -> list[float | None]:
        out: list[float | None] = []
        for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
            if judge is not None:
                steps, verdicts, outcome = judge(prompt, completion)
            else:
                if "outcome" not in kwargs:
                    raise RewardError("outcome: the dataset has no 'outcome' column")
                verdicts = (kwargs.get("step_verdicts") or [None] * len(completions))[i]
                outcome = kwargs["outcome"][i]
                steps = list(verdicts) if verdicts is not None else [completion]
            out.append(process_reward(steps, verdicts, outcome, beta))
        return out

    return process_reward_func


def verl_compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
) -> float:
    """VeRL's custom reward function: the validity reward of a decoded response.

    ``ground_truth`` is the activation (a `records.Activation` as JSON or a dict: the
    dataset's ``reward_model.ground_truth``); ``extra_info`` may hold ``evidence`` and
    ``config`` (a `ValidityConfig` as a dict). ``data_source`` is not used.
    """
    extra = extra_info or {}
    if isinstance(extra, str):
        extra = json.loads(extra)
    cfg = _model(extra.get("config"), ValidityConfig, "extra_info.config")
    return score_completion(solution_str, ground_truth, extra.get("evidence"), cfg)
