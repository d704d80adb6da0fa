"""Typed records of a run, one JSON object per line of ``trajectory.jsonl``.

The worker loop yields these; the CLI renders them, the run writer appends
them, and the report and benchmark read them back with `read_trajectory`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from stateguard.checks import Step
from stateguard.kernel.env import scrub
from stateguard.manager import Hint, ManagerEvent


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    turn: int
    ts: float = Field(default_factory=time.time)


class TurnStarted(_Event):
    """A user turn begins."""

    type: Literal["turn_start"] = "turn_start"
    question: str
    context: str = ""


class ModelMessage(_Event):
    """One message sent to or received from the worker's model."""

    type: Literal["model_message"] = "model_message"
    step: int
    role: Literal["system", "user", "assistant"]
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Prompt tokens the backend reused from its cache; ``prompt_tokens`` minus this is
    what the call evaluated (0 when the backend does not say)."""
    seconds: float = 0.0
    """Wall time of the model call (assistant messages)."""
    candidate: bool = False
    """An extra sample drawn after a repeated failure (Best-of-N), not a step of its own."""
    finish_reason: str | None = None
    """Why the backend stopped generating (``stop``, ``length``, ``time``…), when it says."""
    cut: Literal["tokens", "seconds", "line", "marker"] | None = None
    """The bound that ended this reply: the token cap, the call's wall-clock cap, an
    overlong line, or an imitated system marker (`stateguard.llm.limits`); None: none."""


_STEP_LINE = (
    "turn",
    "ts",
    "type",
    "step",
    "thought",
    "code",
    "observation",
    "execution",
    "cell",
    "answer",
    "problem",
    "setup",
)
"""The keys of a step's line, in the order the line has always had them."""

_UNRECORDED = ("final", "result")
"""`Step` fields a line carries only when set: the verifier's marks, not the worker's."""


class StepRecord(_Event, Step):
    """One worker step: reasoning plus at most one code cell and its observation.

    A `Step` with the event's time and tag. Its line is the flat one it always was:
    ``turn``, ``ts``, ``type``, ``step`` and the step's fields, in that order, with
    ``final`` and ``result`` only when set (the worker never sets them).
    """

    type: Literal["step"] = "step"
    step: int
    """Global step index across the task (0-based)."""

    @model_serializer(mode="wrap")
    def _as_line(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        ordered = {k: out.pop(k) for k in _STEP_LINE if k in out}
        for k in _UNRECORDED:
            if k in out and not out[k]:
                del out[k]
        return {**ordered, **out}

    def as_step(self) -> Step:
        """The plain `Step` (no time, no tag), every step field kept."""
        return Step.model_construct(
            self.model_fields_set & set(Step.model_fields),
            **{k: getattr(self, k) for k in Step.model_fields},
        )


class HintDelivered(_Event):
    """A manager hint injected into the worker's conversation."""

    type: Literal["hint"] = "hint"
    step: int | None = None
    hint: Hint
    tokens: int = 0
    """Tokens of the text the model read for this hint (the worker model's tokenizer where
    it has one, else an estimate of four characters a token)."""


class ManagerLogged(_Event):
    """A manager event (activation, tool call, control action, repair, rollback)."""

    type: Literal["manager_event"] = "manager_event"
    event: ManagerEvent


TurnEnd = Literal["answer", "steps", "tokens", "time", "no_progress", "interrupt"]
"""Why a turn ended: an accepted answer, or no answer because the step budget ran out,
the token budget ran out, the (optional) time budget ran out, the model made no
progress, or the user interrupted."""


class AnswerRecorded(_Event):
    """The accepted answer of a turn (None when the turn ended without one, see `ended`,
    unless one was turned away on a doubt alone: see `unconfirmed`)."""

    type: Literal["answer"] = "answer"
    answer: str | None
    unconfirmed: bool = False
    """The turn ended (see `ended`) with no answer accepted, and ``answer`` is the latest
    one turned away on a doubt alone, never on evidence against it: reported, not
    confirmed, and not committed to the state graph."""
    steps: int
    ended: TurnEnd = "answer"
    wall_time: float
    manager_llm_calls: int = 0
    gold: Any | None = None
    correct: bool | None = None


TrajectoryEvent = Annotated[
    TurnStarted | ModelMessage | StepRecord | HintDelivered | ManagerLogged | AnswerRecorded,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[TrajectoryEvent] = TypeAdapter(TrajectoryEvent)


def dump_event(event: TrajectoryEvent) -> str:
    """One JSON line, with known secret values redacted (`stateguard.kernel.env.scrub`)."""
    return scrub(event.model_dump_json())


def read_trajectory(path: Path) -> Iterator[TrajectoryEvent]:
    """Parse ``trajectory.jsonl``; a malformed line raises ValueError naming the line."""
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield _ADAPTER.validate_python(json.loads(line))
            except Exception as exc:
                raise ValueError(f"{path}:{i}: not a trajectory event: {exc}") from exc
