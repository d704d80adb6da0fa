"""Value types exchanged with chat models: messages, token usage and responses."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    """One chat turn sent to a model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        """Build a system message."""
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        """Build a user message."""
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str) -> ChatMessage:
        """Build an assistant message."""
        return cls(role="assistant", content=content)


class Usage(BaseModel):
    """Token counts of one call, or a sum of calls.

    ``estimated`` is true when at least one contributing count did not come
    from the backend (the server sent no usage, or the backend is scripted).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cached_prompt_tokens: int = Field(default=0, ge=0)
    """Prompt tokens the backend reused from its cache (a shared prefix) rather than
    evaluating them; 0 when unknown."""
    estimated: bool = False

    @model_validator(mode="before")
    @classmethod
    def _accept_total(cls, data: Any) -> Any:
        # A dumped Usage carries the derived total; accept it only if consistent.
        if isinstance(data, dict) and "total_tokens" in data:
            data = dict(data)
            total = data.pop("total_tokens")
            parts = data.get("prompt_tokens", 0) + data.get("completion_tokens", 0)
            if total != parts:
                raise ValueError(f"total_tokens={total} != prompt + completion = {parts}")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        """Sum two usages; the sum is estimated if either part is."""
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            estimated=self.estimated or other.estimated,
        )


class ChatResponse(BaseModel):
    """What a backend returned for one ``complete`` call.

    ``wall_time`` is the seconds spent inside ``complete``, retries included.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    usage: Usage = Field(default_factory=Usage)
    model: str
    wall_time: float = Field(default=0.0, ge=0.0)
    finish_reason: str | None = None


def estimate_tokens(text: str) -> int:
    """Rough token count (one token per four characters, rounded up)."""
    return (len(text) + 3) // 4


def estimate_usage(messages: list[ChatMessage] | tuple[ChatMessage, ...], reply: str) -> Usage:
    """Estimated usage of a call, for backends that do not count tokens."""
    prompt = sum(estimate_tokens(m.content) + 4 for m in messages)
    return Usage(prompt_tokens=prompt, completion_tokens=estimate_tokens(reply), estimated=True)
