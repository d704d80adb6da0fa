"""A chat model that replays scripted replies: the test double shipped with the library."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.errors import ModelError
from stateguard.llm.base import UsageMeter
from stateguard.llm.messages import ChatMessage, ChatResponse, estimate_usage

ScriptItem = str | ChatResponse | BaseException
ReplyFn = Callable[[list[ChatMessage]], str | ChatResponse]


class ScriptedRequest(BaseModel):
    """One call received by a :class:`ScriptedModel`, with all its arguments."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[ChatMessage, ...]
    max_tokens: int | None = None
    temperature: float = 0.0
    stop: tuple[str, ...] | None = None
    json_schema: dict | None = None


class ScriptedModel:
    """Replays replies in order, or answers with ``fn(messages)``.

    ``replies`` items may be strings, full :class:`ChatResponse` objects, or
    exceptions (raised when their turn comes, to script backend failures).
    Every call, including one that raises, is appended to :attr:`requests`
    before the reply is produced. String replies are cut at the first ``stop``
    sequence like a real backend; their usage is estimated.
    """

    def __init__(
        self,
        replies: Sequence[ScriptItem] | ReplyFn | None = None,
        *,
        fn: ReplyFn | None = None,
        name: str = "scripted",
        meter: UsageMeter | None = None,
    ) -> None:
        """Create a model from a reply list or a reply function (exactly one)."""
        if callable(replies) and fn is None:
            replies, fn = None, replies
        if (replies is None) == (fn is None):
            raise ModelError("ScriptedModel needs exactly one of `replies` or `fn`")
        self.name = name
        self.meter = meter
        self._fn = fn
        self._replies: list[ScriptItem] = list(replies) if replies is not None else []
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[ScriptedRequest] = []

    @property
    def remaining(self) -> int | None:
        """Replies not yet used (None in function mode)."""
        with self._lock:
            return None if self._fn is not None else len(self._replies) - self._next

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        json_schema: dict | None = None,
    ) -> ChatResponse:
        """Record the request and return the next scripted reply."""
        start = time.perf_counter()
        msgs = tuple(messages)
        request = ScriptedRequest(
            messages=msgs,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=tuple(stop) if stop is not None else None,
            json_schema=json_schema,
        )
        with self._lock:
            self.requests.append(request)
            n_calls = len(self.requests)
            item: ScriptItem | None = None
            if self._fn is None:
                if self._next >= len(self._replies):
                    raise ModelError(f"ScriptedModel ran out of replies after {n_calls - 1} calls")
                item = self._replies[self._next]
                self._next += 1
        if item is None:
            assert self._fn is not None
            item = self._fn(list(msgs))
        if isinstance(item, BaseException):
            raise item
        response = self._to_response(item, msgs, stop, time.perf_counter() - start)
        if self.meter is not None:
            self.meter.record(response)
        return response

    def _to_response(
        self,
        item: str | ChatResponse,
        msgs: tuple[ChatMessage, ...],
        stop: Sequence[str] | None,
        wall: float,
    ) -> ChatResponse:
        if isinstance(item, ChatResponse):
            return item
        if not isinstance(item, str):
            raise ModelError(
                f"ScriptedModel reply must be str, ChatResponse or an exception, "
                f"got {type(item).__name__}"
            )
        content = _apply_stop(item, stop)
        return ChatResponse(
            content=content,
            usage=estimate_usage(msgs, content),
            model=self.name,
            wall_time=wall,
            finish_reason="stop",
        )


def _apply_stop(text: str, stop: Sequence[str] | None) -> str:
    """Cut ``text`` before the earliest stop sequence, as real backends do."""
    cut = min((i for s in stop or () if s and (i := text.find(s)) >= 0), default=-1)
    return text[:cut] if cut >= 0 else text
