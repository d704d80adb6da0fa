"""What the manager logs, as a typed, tagged union of event payloads.

The harness builds one of these per event; `ManagerEvent` (protocol.py) carries it on
the wire as ``type`` plus ``data`` (so logs and trajectories keep their JSON shape),
and `ManagerEvent.payload` reads it back as the typed value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True)

    def data(self) -> dict[str, Any]:
        """The fields without the tag, JSON-ready."""
        return self.model_dump(mode="json", exclude={"type"})


class Activation(_Payload):
    type: Literal["activation"] = "activation"
    event: str
    chain: int
    draft: str | None = None


class PolicyFailed(_Payload):
    type: Literal["policy_error"] = "policy_error"
    error: str


class ToolCall(_Payload):
    type: Literal["tool_call"] = "tool_call"
    action: dict[str, Any]
    result: str


class IllegalAction(_Payload):
    type: Literal["illegal_action"] = "illegal_action"
    action: dict[str, Any]
    error: str


class Control(_Payload):
    type: Literal["control"] = "control"
    action: dict[str, Any]
    result: str


class BudgetExhausted(_Payload):
    type: Literal["activation_budget_exhausted"] = "activation_budget_exhausted"
    max_actions: int


class Commit(_Payload):
    type: Literal["commit"] = "commit"
    state: dict[str, Any]
    checkpoint: list[str]
    """Names saved in the state's checkpoint."""


class RepairLogged(_Payload):
    type: Literal["repair"] = "repair"
    state: str
    attempt: int
    mode: str
    removed: list[str] = []
    restored: list[str] = []
    notice: dict[str, Any] | None = None


class Rollback(_Payload):
    type: Literal["rollback"] = "rollback"
    state: str
    checkpoint: str | None = None
    restored: list[str] = []


class Abandon(_Payload):
    type: Literal["abandon"] = "abandon"
    state: str
    reason: str


class StoreFailed(_Payload):
    type: Literal["store_error"] = "store_error"
    error: str


class HintLogged(_Payload):
    type: Literal["hint"] = "hint"
    kind: str
    states: list[str] = []
    notice: dict[str, Any] | None = None


class TurnEnd(_Payload):
    type: Literal["turn_end"] = "turn_end"
    answer: str | None = None


class WindowReview(_Payload):
    type: Literal["window_review"] = "window_review"
    hint: str


Payload = Annotated[
    Activation
    | PolicyFailed
    | ToolCall
    | IllegalAction
    | Control
    | BudgetExhausted
    | Commit
    | RepairLogged
    | Rollback
    | Abandon
    | StoreFailed
    | HintLogged
    | TurnEnd
    | WindowReview,
    Field(discriminator="type"),
]
PAYLOAD: TypeAdapter[Payload] = TypeAdapter(Payload)
