"""Rewards for managers and agents, as plain functions RL trainers can call.

* `validity_reward` (`stateguard.train.validity`): protocol correctness, grounding,
  intervention quality (a false repair costs ``beta_fp``, a missed fault ``beta_fn``,
  ``beta_fp > beta_fn``) and outcome of a manager trajectory.
* `process_reward` (`stateguard.train.process_reward`): DataPRM's
  ``(1 - beta) * outcome + beta * mean step reward``, with the final step's reward
  forced to the outcome; the step rewards are the step verifier's verdicts.
* Adapters (`stateguard.train.reward_adapters`): `grpo_validity_reward` and
  `grpo_process_reward` build TRL ``GRPOTrainer`` reward functions;
  `verl_compute_score` is a VeRL custom reward function.
"""

from stateguard.train.process_reward import (
    INVALID_POLICIES,
    ProcessReward,
    RewardError,
    process_breakdown,
    process_reward,
)
from stateguard.train.reward_adapters import (
    completion_actions,
    grpo_process_reward,
    grpo_validity_reward,
    score_completion,
    verl_compute_score,
)
from stateguard.train.validity import (
    ActivationAttempt,
    RewardEvidence,
    ValidityConfig,
    ValidityScore,
    attempts_of,
    validity_breakdown,
    validity_reward,
)

__all__ = [
    "INVALID_POLICIES",
    "ActivationAttempt",
    "ProcessReward",
    "RewardError",
    "RewardEvidence",
    "ValidityConfig",
    "ValidityScore",
    "attempts_of",
    "completion_actions",
    "grpo_process_reward",
    "grpo_validity_reward",
    "process_breakdown",
    "process_reward",
    "score_completion",
    "validity_breakdown",
    "validity_reward",
    "verl_compute_score",
]
