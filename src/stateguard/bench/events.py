"""`Event`: a message from a task job to the parent that writes the run directory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

EventKind = Literal["task_start", "turn", "injection", "error", "task_end"]


class Event(BaseModel):
    """A message from a task job to the parent."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    task_id: str
    payload: dict[str, Any] = {}


Emit = Callable[[Event], None]
