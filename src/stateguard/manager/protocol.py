"""The contract between the worker loop and whatever supervises it.

The worker never sees the manager's internals: it calls these four methods at
fixed points of its loop and injects the returned hints, verbatim, as
reference-only user content. Each step reaches the supervisor as a
`stateguard.checks.Step`. A `Supervisor` never solves the task.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, Self, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from stateguard.checks import Step
from stateguard.manager.events import Payload, Unrecognized, event_fields
from stateguard.manager.notes import Notice


class Hint(BaseModel):
    """A message from the manager to the worker. Reference-only, never a solution."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["state", "repair"]
    text: str = ""
    """Exactly what the worker is shown (rendered from `notice` by `stateguard.hints`)."""
    notice: Notice | None = None
    """What the manager means, as a typed value (None for free-form hints)."""
    state_ids: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()
    """Variable versions (``name@vN``) the hint refers to."""
    evidence: tuple[str, ...] = ()
    """Machine-checked evidence behind a repair hint (e.g. the superseding write)."""


class AnswerReview(BaseModel):
    """The supervisor's verdict on a proposed answer."""

    model_config = ConfigDict(frozen=True)

    accepted: bool
    hints: tuple[Hint, ...] = ()
    """Repair hints to inject when the answer is not accepted."""


class ManagerEvent(BaseModel):
    """One logged manager event: a typed payload, with the turn and step it happened at.

    It serializes flat, tagged by ``type`` (see `stateguard.manager.events`); it reads
    that shape and the older ``type`` + ``data`` one.
    """

    model_config = ConfigDict(frozen=True)

    turn: int | None = None
    step: int | None = None
    payload: Payload

    @model_validator(mode="before")
    @classmethod
    def _from_record(cls, raw: Any) -> Any:
        return event_fields(raw)

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        payload = out.pop("payload")
        return {"type": payload.pop("type"), **out, **payload}

    @classmethod
    def of(cls, payload: Payload, *, turn: int | None = None, step: int | None = None) -> Self:
        """The event of a typed payload."""
        return cls(turn=turn, step=step, payload=payload)

    @property
    def type(self) -> str:
        """The event's tag (an unrecognized event keeps the type it was read with)."""
        p = self.payload
        return p.original_type if isinstance(p, Unrecognized) else p.type

    @property
    def data(self) -> dict[str, Any]:
        """The payload's fields without the tag, JSON-ready."""
        return self.payload.data()


@runtime_checkable
class Supervisor(Protocol):
    """Called by the worker at fixed points of its loop."""

    def begin_turn(self, turn: int, question: str, context: str = "") -> list[Hint]:
        """A new user turn starts (``context``: what the user said before the question);
        returns state hints to show before the first step."""
        ...

    def after_step(self, view: Step) -> list[Hint]:
        """A step (code executed) finished; returns hints to inject before the next step."""
        ...

    def review_answer(self, view: Step) -> AnswerReview:
        """The worker proposes an answer; a rejection carries repair hints and the loop goes on."""
        ...

    def end_turn(self, turn: int, answer: str | None) -> None:
        """The turn is over (answer accepted or step budget exhausted)."""
        ...

    def drain_events(self) -> list[ManagerEvent]:
        """Events logged since the last call, oldest first."""
        ...

    @property
    def llm_calls(self) -> int:
        """Model calls the supervisor has made so far."""
        ...


class NullSupervisor:
    """No manager at all: plain ReAct."""

    llm_calls = 0

    def begin_turn(self, turn: int, question: str, context: str = "") -> list[Hint]:
        """No hints."""
        return []

    def after_step(self, view: Step) -> list[Hint]:
        """No hints."""
        return []

    def review_answer(self, view: Step) -> AnswerReview:
        """Every answer is accepted."""
        return AnswerReview(accepted=True)

    def end_turn(self, turn: int, answer: str | None) -> None:
        """Nothing to do."""

    def drain_events(self) -> list[ManagerEvent]:
        """No events."""
        return []
