"""The chat JSONL a fine-tuning run reads, checked row by row.

Rows are ``{"messages": [{"role": ..., "content": ...}, ...]}`` ending with an
assistant message, as `stateguard train synth` exports them. A directory holds
``train.jsonl`` (and ``validation.jsonl``); a directory without ``train.jsonl`` is read
whole (every ``*.jsonl`` but the ``*.index.jsonl`` sample indexes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from stateguard.errors import StateguardError


class SFTDataError(StateguardError):
    """Training data that cannot be used: names the file, the line and the field."""


class Message(BaseModel):
    """One chat message of a row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str


class ChatRow(BaseModel):
    """One training row: a conversation ending with the assistant's message."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    messages: tuple[Message, ...]

    @field_validator("messages")
    @classmethod
    def _ends_with_assistant(cls, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        if not messages:
            raise ValueError("no messages")
        if messages[-1].role != "assistant":
            raise ValueError(
                f"the last message is a {messages[-1].role!r} message, not 'assistant'"
            )
        return messages

    def as_dict(self) -> dict[str, Any]:
        """The row as TRL's conversational dataset format."""
        return {"messages": [m.model_dump() for m in self.messages]}


def read_rows(path: Path) -> list[ChatRow]:
    """The rows of one JSONL file (blank lines skipped; a bad row is an `SFTDataError`)."""
    rows = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SFTDataError(f"{path}: not UTF-8 text ({exc.reason})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SFTDataError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
        if not isinstance(data, dict) or "messages" not in data:
            raise SFTDataError(f"{path}:{lineno}: a row is an object with a 'messages' list")
        try:
            rows.append(ChatRow.model_validate(data))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise SFTDataError(f"{path}:{lineno}: {where}: {err['msg']}") from None
    return rows


def data_files(data: Path) -> tuple[list[Path], list[Path]]:
    """The training and validation files of ``data`` (a directory or one file)."""
    if not data.exists():
        raise SFTDataError(f"--data {data}: no such file or directory")
    if data.is_file():
        return [data], []
    train = data / "train.jsonl"
    validation = data / "validation.jsonl"
    if train.is_file():
        return [train], [validation] if validation.is_file() else []
    files = sorted(
        p
        for p in data.glob("*.jsonl")
        if not p.name.endswith(".index.jsonl") and p.name != "validation.jsonl"
    )
    if not files:
        raise SFTDataError(f"--data {data}: no train.jsonl nor any other *.jsonl file")
    return files, [validation] if validation.is_file() else []


def load_data(data: Path) -> tuple[list[ChatRow], list[ChatRow]]:
    """Training and validation rows of ``data``; no training row is an `SFTDataError`."""
    train_files, val_files = data_files(data)
    train = [r for p in train_files for r in read_rows(p)]
    if not train:
        raise SFTDataError(f"--data {data}: no training rows in {', '.join(map(str, train_files))}")
    return train, [r for p in val_files for r in read_rows(p)]
