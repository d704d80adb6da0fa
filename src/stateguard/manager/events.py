"""What the manager logs, as a typed, tagged union of event payloads.

The harness builds one of these per event; `ManagerEvent` (protocol.py) carries it
with the turn and step. On disk an event is one flat object tagged by ``type``
(``{"type": "commit", "turn": 2, "step": 7, "state": ..., "checkpoint": [...]}``).
`event_fields` also reads the older shape (``{"type", "turn", "step", "data": {...}}``);
an event this version does not know is kept whole as `Unrecognized`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


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


class Unrecognized(_Payload):
    """An event read from a log whose type or fields this version does not know, kept whole."""

    type: Literal["unrecognized"] = "unrecognized"
    original_type: str
    fields: dict[str, Any] = {}

    def data(self) -> dict[str, Any]:
        """The fields as they were read."""
        return dict(self.fields)


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
    | WindowReview
    | Unrecognized,
    Field(discriminator="type"),
]
PAYLOAD: TypeAdapter[Payload] = TypeAdapter(Payload)

_ENVELOPE = ("turn", "step")
_NOT_PAYLOAD = ("ts",)
"""Keys a log line may carry that belong to no payload (the sink's timestamp)."""


def read_payload(fields: dict[str, Any]) -> Payload:
    """The typed payload of tagged ``fields``; `Unrecognized` when they fit no known event."""
    try:
        return PAYLOAD.validate_python(fields)
    except ValidationError:
        rest = {k: v for k, v in fields.items() if k != "type"}
        return Unrecognized(original_type=str(fields.get("type", "")), fields=rest)


def event_fields(raw: Any) -> Any:
    """``{"turn", "step", "payload"}`` of an event in the flat shape or the older one.

    Anything that is not a dict, or already has a ``payload``, is returned as it is.
    """
    if not isinstance(raw, dict) or "payload" in raw:
        return raw
    rest = {k: v for k, v in raw.items() if k not in _ENVELOPE and k not in _NOT_PAYLOAD}
    if not isinstance(rest.get("type"), str):
        raise ValueError("a manager event needs a string 'type'")
    if isinstance(rest.get("data"), dict) and set(rest) <= {"type", "data"}:
        rest = {"type": rest.get("type"), **rest["data"]}  # the older shape
    envelope = {k: raw[k] for k in _ENVELOPE if k in raw}
    return {**envelope, "payload": read_payload(rest)}
