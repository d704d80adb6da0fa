"""Policies under test in the manager decision benchmark: how each is asked in one view.

An asker gets the recorded activation, the branch's recorded activations, the live
view and snapshot, and returns the kind of the control action the policy chose and
whether the exchange was protocol-valid (every reply one valid action, the final one a
control action legal in that phase). Tool actions run against the snapshot.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from stateguard.llm import ChatMessage, ChatModel
from stateguard.manager import HarnessConfig
from stateguard.manager import actions as A
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.policies.deterministic import DeterministicPolicy
from stateguard.manager.policies.llm import LLMPolicy, result_message
from stateguard.manager.tools import run_tool
from stateguard.train.export import prompt_messages
from stateguard.train.records import Activation
from stateguard.train.validity_checks import illegal_reason


def legal(action: Any, obs: Observation, max_repairs: int) -> bool:
    """``action`` is a control action legal in the view ``obs``."""
    return A.is_control(action) and illegal_reason(action.kind, obs, max_repairs) is None


Asker = Callable[[Activation, Sequence[Activation], Observation, PolicyContext], tuple[str, bool]]


def deterministic_asker(config: HarnessConfig) -> Asker:
    """Ask `DeterministicPolicy` (tool actions run against the snapshot)."""
    policy = DeterministicPolicy()

    def ask(act: Activation, history: Sequence[Activation], obs: Observation, ctx: PolicyContext):
        last = obs.last_action_result
        for _ in range(config.max_actions):
            action = policy.next_action(obs.model_copy(update={"last_action_result": last}), ctx)
            if A.is_control(action):
                return action.kind, legal(action, obs, config.max_repairs)
            last = run_tool(action, ctx)  # type: ignore[arg-type]
        return "ABSTAIN", False

    return ask


class OutOfTime(Exception):
    """The time budget ran out while a policy was being asked (the activation is unasked)."""


class LLMAsker:
    """Ask a chat model in the LLM policy's protocol (see the module docstring)."""

    def __init__(
        self,
        model: ChatModel,
        config: HarnessConfig,
        *,
        max_tokens: int = 400,
        deadline: float | None = None,
    ) -> None:
        self.policy = LLMPolicy(model, max_tokens=max_tokens)
        self.config = config
        self.deadline = deadline

    @property
    def calls(self) -> int:
        """Model calls made so far."""
        return self.policy.llm_calls

    def __call__(
        self,
        act: Activation,
        history: Sequence[Activation],
        obs: Observation,
        ctx: PolicyContext,
    ) -> tuple[str, bool]:
        msgs: list[ChatMessage] = prompt_messages(history, act)
        invalid = self.policy.invalid_replies
        for _ in range(self.config.max_actions):
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise OutOfTime
            action = self.policy.reply(msgs)
            if A.is_control(action):
                ok = self.policy.invalid_replies == invalid
                if isinstance(action, A.Abstain) and action.reason.startswith("model failed"):
                    ok = False  # the backend failed: no reply at all
                return action.kind, ok and legal(action, obs, self.config.max_repairs)
            msgs.append(
                ChatMessage(role="user", content=result_message(run_tool(action, ctx)))  # type: ignore[arg-type]
            )
        return "ABSTAIN", False
