"""DataPRM's process reward: outcome and mean step reward, the final step agreeing.

``r = (1 - beta) * outcome + beta * mean(step rewards)``, where the step rewards are
the step verifier's scores (0, 0.5, 1; see `stateguard.verify.StepVerdict`) and the
final step's reward is forced to the outcome (*final-step consistency*: a trajectory
whose answer is wrong cannot end on a step scored correct, nor a right one on a step
scored fatal).

Invalid verdicts (the verifier could not produce a score it stands behind, see
`stateguard.verify.InvalidReason`) and missing ones (``None``) carry no step reward:
by default (``invalid="skip"``) they are left out of the mean, so a verifier failure
neither punishes nor rewards the step. ``invalid="zero"`` scores them 0 (a failure
to verify counts against the step) and ``invalid="neutral"`` scores them 0.5. The
final step is never left out: its reward is the outcome whatever its verdict says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from stateguard.errors import StateguardError
from stateguard.verify import SCORES, StepVerdict

InvalidPolicy = Literal["skip", "zero", "neutral"]
INVALID_POLICIES: tuple[str, ...] = ("skip", "zero", "neutral")
_INVALID_SCORE = {"zero": 0.0, "neutral": 0.5}

StepInput = StepVerdict | float | None
"""A step's verdict: a `StepVerdict`, a bare score (0, 0.5, 1), or None (no verdict)."""


class RewardError(StateguardError):
    """A reward was asked for with inputs it cannot score: names the field."""


class ProcessReward(BaseModel):
    """The process reward with what it was made of."""

    model_config = ConfigDict(frozen=True)

    total: float
    outcome: float
    beta: float
    step_rewards: tuple[float | None, ...]
    """Per step, after final-step consistency; None for a step left out of the mean."""
    mean_step: float
    invalid_steps: int
    """Steps whose verdict was invalid or missing (before the final-step rule)."""


def _outcome(value: Any) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and 0.0 <= float(value) <= 1.0:
        return float(value)
    raise RewardError(f"outcome: expected a bool or a number in [0, 1], got {value!r}")


def _step_score(i: int, verdict: Any, invalid: str) -> float | None:
    if isinstance(verdict, StepVerdict):
        score = verdict.score
    elif verdict is None:
        score = None
    elif isinstance(verdict, int | float) and not isinstance(verdict, bool):
        if float(verdict) not in SCORES:
            raise RewardError(f"step_verdicts[{i}]: a score is 0, 0.5 or 1, got {verdict!r}")
        score = float(verdict)
    else:
        raise RewardError(
            f"step_verdicts[{i}]: expected a StepVerdict, a score or None, "
            f"got {type(verdict).__name__}"
        )
    if score is None:
        return _INVALID_SCORE.get(invalid)
    return float(score)


def process_breakdown(
    trajectory: Sequence[Any],
    step_verdicts: Sequence[StepInput] | None,
    outcome: bool | float,
    beta: float = 0.5,
    *,
    invalid: InvalidPolicy = "skip",
) -> ProcessReward:
    """The process reward of ``trajectory`` (one verdict per step) and its parts.

    ``step_verdicts`` None means the verifier was not run: every step has no verdict
    and only the final step (forced to the outcome) counts, so ``r = outcome``. An
    empty trajectory also scores the outcome.
    """
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not 0.0 <= beta <= 1.0:
        raise RewardError(f"beta: expected a number in [0, 1], got {beta!r}")
    if invalid not in INVALID_POLICIES:
        raise RewardError(
            f"invalid: expected one of {', '.join(INVALID_POLICIES)}, got {invalid!r}"
        )
    out = _outcome(outcome)
    n = len(trajectory)
    verdicts: list[StepInput] = [None] * n if step_verdicts is None else list(step_verdicts)
    if len(verdicts) != n:
        raise RewardError(
            f"step_verdicts: {len(verdicts)} verdicts for a trajectory of {n} steps "
            "(one per step, None where there is none)"
        )
    if n == 0:
        return ProcessReward(
            total=out, outcome=out, beta=beta, step_rewards=(), mean_step=out, invalid_steps=0
        )
    scores = [_step_score(i, v, invalid) for i, v in enumerate(verdicts)]
    invalid_steps = sum(
        1 for v in verdicts if v is None or (isinstance(v, StepVerdict) and not v.valid)
    )
    scores[-1] = out  # final-step consistency
    counted = [s for s in scores if s is not None]
    mean_step = sum(counted) / len(counted)
    total = (1.0 - beta) * out + beta * mean_step
    return ProcessReward(
        total=total,
        outcome=out,
        beta=float(beta),
        step_rewards=tuple(scores),
        mean_step=mean_step,
        invalid_steps=invalid_steps,
    )


def process_reward(
    trajectory: Sequence[Any],
    step_verdicts: Sequence[StepInput] | None,
    outcome: bool | float,
    beta: float = 0.5,
    *,
    invalid: InvalidPolicy = "skip",
) -> float:
    """DataPRM's ``r = (1 - beta) * outcome + beta * mean step reward``, final step = outcome.

    ``trajectory`` is the agent's steps (e.g. `stateguard.checks.Step`; only their
    count matters here), ``step_verdicts`` one verdict per step from the step verifier
    (`StepVerdict`, a bare score or None), ``outcome`` whether the final answer is right
    (a bool, or a score in [0, 1]). See the module docstring for invalid verdicts.
    """
    return process_breakdown(trajectory, step_verdicts, outcome, beta, invalid=invalid).total
