"""The chat-model protocol every backend implements, and a shared usage meter."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from stateguard.llm.messages import ChatMessage, ChatResponse, Usage


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion backend.

    ``complete`` is synchronous and returns the whole reply. With
    ``json_schema`` the backend asks for (or constrains to) JSON matching the
    schema where it can; callers must still validate the content. Failures of
    the backend itself raise :class:`stateguard.errors.ModelError`.
    """

    name: str

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        json_schema: dict | None = None,
    ) -> ChatResponse:
        """Return the model's reply to ``messages``."""
        ...


class MeterSnapshot(BaseModel):
    """A consistent copy of a :class:`UsageMeter` at one moment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = 0
    usage: Usage = Usage()
    wall_time: float = 0.0
    estimated_calls: int = 0


class UsageMeter:
    """Thread-safe accumulator of token usage, call count and wall time.

    Backends call :meth:`record` once per successful ``complete``; failed
    calls are not recorded.
    """

    def __init__(self) -> None:
        """Create an empty meter."""
        self._lock = threading.Lock()
        self._snapshot = MeterSnapshot()

    def record(self, response_or_usage: ChatResponse | Usage) -> None:
        """Add one call's usage (and wall time, when given a response)."""
        if isinstance(response_or_usage, ChatResponse):
            usage, wall = response_or_usage.usage, response_or_usage.wall_time
        else:
            usage, wall = response_or_usage, 0.0
        with self._lock:
            s = self._snapshot
            self._snapshot = MeterSnapshot(
                calls=s.calls + 1,
                usage=s.usage + usage,
                wall_time=s.wall_time + wall,
                estimated_calls=s.estimated_calls + int(usage.estimated),
            )

    def snapshot(self) -> MeterSnapshot:
        """Return the totals so far."""
        with self._lock:
            return self._snapshot

    def reset(self) -> MeterSnapshot:
        """Zero the meter and return the totals it had."""
        with self._lock:
            old, self._snapshot = self._snapshot, MeterSnapshot()
            return old

    @property
    def calls(self) -> int:
        """Number of recorded calls."""
        return self.snapshot().calls

    @property
    def usage(self) -> Usage:
        """Summed usage of recorded calls."""
        return self.snapshot().usage

    @property
    def prompt_tokens(self) -> int:
        """Summed prompt tokens."""
        return self.snapshot().usage.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        """Summed completion tokens."""
        return self.snapshot().usage.completion_tokens

    @property
    def total_tokens(self) -> int:
        """Summed prompt plus completion tokens."""
        return self.snapshot().usage.total_tokens
