"""Backend for any OpenAI-compatible chat-completions endpoint, via the official SDK."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import openai

from stateguard.errors import ModelError
from stateguard.llm.base import UsageMeter
from stateguard.llm.messages import ChatMessage, ChatResponse, Usage

# Order in which structured-output requests degrade when a server rejects them.
_FORMAT_LADDER = ("json_schema", "json_object", "none")
_PLACEHOLDER_KEY = "not-needed"


def is_transient(error: BaseException) -> bool:
    """True for errors worth retrying: connection/timeout, 429 and 5xx."""
    if isinstance(error, openai.APIConnectionError | openai.RateLimitError):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return False


def _rejects_format(error: BaseException) -> bool:
    """True if a server refused the request itself (400/422), e.g. an unknown response_format."""
    return isinstance(error, openai.APIStatusError) and error.status_code in (400, 422)


class OpenAIChatModel:
    """Chat model talking to an OpenAI-compatible server.

    The SDK's own retries are disabled; this class retries transient errors
    (connection, timeout, 429, 5xx) up to ``max_retries`` times with
    exponential backoff and jitter (``backoff_base * 2**attempt``, capped at
    ``backoff_max``, times a factor in [0.5, 1]). A 429 ``Retry-After`` header
    is honoured up to ``backoff_max``. Other 4xx errors fail at once.

    With ``json_schema`` it first sends ``response_format`` of type
    ``json_schema``; if the server rejects that (400/422) it falls back to
    ``json_object`` and then to no response_format, and remembers the level
    that worked for later calls.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        meter: UsageMeter | None = None,
        name: str | None = None,
        seed: int | None = None,
        client: openai.OpenAI | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Create a client for ``model`` at ``base_url`` (the SDK default when None).

        A missing ``api_key`` is replaced by a placeholder, since local
        servers usually need none; a real endpoint then answers 401.
        """
        if max_retries < 0:
            raise ModelError(f"max_retries must be >= 0, got {max_retries}")
        self.model = model
        self.name = name or f"openai:{model}"
        self.meter = meter
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.seed = seed
        self._sleep = sleep
        self._client = client or openai.OpenAI(
            base_url=base_url,
            api_key=api_key or _PLACEHOLDER_KEY,
            max_retries=0,
            timeout=timeout,
        )
        self.base_url = str(self._client.base_url)
        self._format_level = 0
        self._lock = threading.Lock()

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        json_schema: dict | None = None,
    ) -> ChatResponse:
        """Send one chat-completion request (with retries) and return the reply."""
        start = time.perf_counter()
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if stop:
            params["stop"] = list(stop)
        if self.seed is not None:
            params["seed"] = self.seed

        with self._lock:
            level = self._format_level
        while True:
            fmt = _FORMAT_LADDER[level] if json_schema is not None else "none"
            try:
                completion = self._call_with_retries(params, _response_format(fmt, json_schema))
                break
            except _Rejected as rejected:
                if fmt == "none":
                    raise self._error(rejected.attempts, rejected.error) from rejected.error
                level += 1
        if json_schema is not None:
            with self._lock:
                self._format_level = max(self._format_level, level)

        response = self._to_response(completion, time.perf_counter() - start)
        if self.meter is not None:
            self.meter.record(response)
        return response

    def _call_with_retries(self, params: dict[str, Any], response_format: dict | None) -> Any:
        call = dict(params)
        if response_format is not None:
            call["response_format"] = response_format
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._client.chat.completions.create(**call)
            except openai.OpenAIError as error:
                if is_transient(error) and attempt <= self.max_retries:
                    self._sleep(self._delay(attempt, error))
                    continue
                if _rejects_format(error):
                    raise _Rejected(error, attempt) from error
                raise self._error(attempt, error) from error

    def _delay(self, attempt: int, error: BaseException) -> float:
        retry_after = _retry_after_seconds(error)
        if retry_after is not None:
            return min(self.backoff_max, retry_after)
        delay = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
        return delay * random.uniform(0.5, 1.0)

    def _error(self, attempts: int, error: BaseException) -> ModelError:
        status = getattr(error, "status_code", None)
        what = f"HTTP {status} {type(error).__name__}" if status else type(error).__name__
        return ModelError(
            f"chat request to {self.base_url} (model {self.model!r}) failed after "
            f"{attempts} attempt(s): {what}: {error}"
        )

    def _to_response(self, completion: Any, wall: float) -> ChatResponse:
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise ModelError(
                f"chat response from {self.base_url} (model {self.model!r}) has no choices"
            )
        choice = choices[0]
        content = choice.message.content if choice.message is not None else None
        raw_usage = getattr(completion, "usage", None)
        if raw_usage is None:
            usage = Usage(estimated=True)  # server sent no usage; counted as 0, flagged
        else:
            details = getattr(raw_usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            usage = Usage(
                prompt_tokens=raw_usage.prompt_tokens or 0,
                completion_tokens=raw_usage.completion_tokens or 0,
                cached_prompt_tokens=min(int(cached), raw_usage.prompt_tokens or 0),
            )
        return ChatResponse(
            content=content or "",
            usage=usage,
            model=getattr(completion, "model", None) or self.model,
            wall_time=wall,
            finish_reason=choice.finish_reason,
        )


class _Rejected(Exception):
    """Internal: the server refused the request shape (400/422)."""

    def __init__(self, error: openai.OpenAIError, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


def _response_format(fmt: str, schema: dict | None) -> dict | None:
    if fmt == "json_schema" and schema is not None:
        name = str(schema.get("title") or "response")
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
        return {"type": "json_schema", "json_schema": {"name": safe, "schema": schema}}
    if fmt == "json_object":
        return {"type": "json_object"}
    return None


def _retry_after_seconds(error: BaseException) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
