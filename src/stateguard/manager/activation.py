"""One activation of a policy: tool actions gather evidence, one control action ends it.

Every action is logged; an illegal control action is logged and its error shown to the
policy as the last result; after ``max_actions`` the activation abstains.
"""

from __future__ import annotations

from collections.abc import Callable

from stateguard.errors import IllegalActionError, PolicyError
from stateguard.manager import actions as A
from stateguard.manager import events as E
from stateguard.manager.policies.base import Observation, Policy, PolicyContext
from stateguard.manager.tools import run_tool

TOOL_RESULT_CHARS = 2000
"""How much of a tool's result an event keeps."""

Observe = Callable[[str | None], Observation]
Apply = Callable[[A.ControlAction], str]
Log = Callable[[E.Payload], None]


def run_activation(
    policy: Policy,
    ctx: PolicyContext,
    *,
    observe: Observe,
    apply: Apply,
    log: Log,
    max_actions: int,
    last_result: str | None = None,
) -> tuple[str, str | None]:
    """Ask ``policy`` for actions until one control action applies; its kind and result."""
    for _ in range(max_actions):
        try:
            action = policy.next_action(observe(last_result), ctx)
        except PolicyError as exc:
            log(E.PolicyFailed(error=str(exc)))
            action = A.Abstain(reason=f"policy error: {exc}")
        dumped = action.model_dump(mode="json")
        if not A.is_control(action):
            result = run_tool(action, ctx)  # type: ignore[arg-type]
            log(E.ToolCall(action=dumped, result=result[:TOOL_RESULT_CHARS]))
            last_result = result
            continue
        try:
            result = apply(action)  # type: ignore[arg-type]
        except IllegalActionError as exc:
            log(E.IllegalAction(action=dumped, error=str(exc)))
            last_result = f"error: {exc}"
            continue
        log(E.Control(action=dumped, result=result))
        return action.kind, result  # type: ignore[attr-defined]
    log(E.BudgetExhausted(max_actions=max_actions))
    return "ABSTAIN", None
