"""The simple task format of `stateguard run`: data files plus an ordered list of turns.

A task is a YAML (``.yaml``/``.yml``) or JSON (``.json``) file, or a directory
holding exactly one of ``task.yaml``, ``task.yml``, ``task.json``::

    name: unit-economics              # required, non-empty
    description: Orders of 2024 ...   # optional
    data: data                        # a path, or a list of paths (files or dirs)
    turns:                            # required, at least one
      - context: Cost of goods is 42% of net revenue.   # optional text shown first
        question: What is the total contribution margin?
        answer: 123456.78             # optional gold: a scalar, or a mapping of scalars
        tolerance: 0.01               # optional absolute tolerance for numbers
      - question: Contribution margin by channel?
        answer: {Online: 1.5, Retail: 2.5}

Paths are relative to the task file's directory (absolute paths are allowed) and
must exist. The agent sees the data read-only under ``data/`` in its kernel: a
single directory is exposed as it is, anything else (files, several entries) is
copied into a fresh directory by name. A data directory must not contain the task
file itself (the gold answers would be readable by the agent). Unknown keys are
errors. Every problem raises `TaskFormatError` naming the file and the field,
with the turn index (``turns[2].question``, 0-based, and the 1-based turn number).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stateguard.errors import TaskFormatError

TASK_FILE_NAMES = ("task.yaml", "task.yml", "task.json")
Scalar = str | int | float | bool


def _check_scalar(value: Any, where: str) -> None:
    if not isinstance(value, str | int | float | bool):
        raise ValueError(f"{where} must be a string, number or boolean, got {type(value).__name__}")


class TaskTurn(BaseModel):
    """One question of a task, with optional context and gold answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context: str = ""
    question: str = Field(min_length=1)
    answer: Any = None
    """Gold answer: a scalar or a mapping of field name to scalar; None if unknown."""
    tolerance: float | None = Field(default=None, ge=0)
    """Absolute tolerance for numeric gold values (default: 1e-6 relative)."""

    @field_validator("question")
    @classmethod
    def _non_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("answer")
    @classmethod
    def _gold(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, dict):
            if not value:
                raise ValueError("a mapping gold answer must have at least one field")
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ValueError(f"mapping keys must be strings, got {key!r}")
                _check_scalar(item, f"field {key!r}")
            return value
        _check_scalar(value, "the gold answer")
        return value


class Task(BaseModel):
    """A multi-turn analysis over some data files (paths resolved when loaded from a file)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    data: tuple[Path, ...] = ()
    turns: tuple[TaskTurn, ...] = ()
    network: bool = False
    """Give the agent's kernel the host's network (it has none by default, when sandboxed)."""
    source: Path | None = None
    """The file the task was loaded from, if any."""

    @field_validator("data", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    if len(loc) >= 2 and loc[0] == "turns" and isinstance(loc[1], int):
        out += f" (turn {loc[1] + 1})"
    return out or "(top level)"


def _field_with(value: Any, needle: str, loc: tuple[int | str, ...] = ()) -> str | None:
    """Where (``turns[0].question (turn 1)``) the first string holding ``needle`` is, if any."""
    if isinstance(value, str):
        return _loc(loc) if needle in value else None
    if not isinstance(value, dict | list):
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, str) and needle in key:
            return _loc((*loc, key))
        found = _field_with(item, needle, (*loc, key))
        if found is not None:
            return found
    return None


def _parse(path: Path, text: str) -> Any:
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            return yaml.safe_load(text)
        if suffix == ".json":
            return json.loads(text)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        raise TaskFormatError(f"{path}: not valid {suffix[1:].upper()}: {exc}") from None
    raise TaskFormatError(f"{path}: a task file must end in .yaml, .yml or .json")


def _read(path: Path) -> Any:
    """The parsed task file; non-UTF-8 bytes and NUL characters are errors naming the field."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TaskFormatError(f"{path}: cannot read the task file: {exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        try:
            field = _field_with(_parse(path, data.decode("utf-8", errors="replace")), "\ufffd")
        except (TaskFormatError, RecursionError):
            field = None
        raise TaskFormatError(
            f"{path}: {field + ': ' if field else ''}byte 0x{data[exc.start]:02x} at line "
            f"{line}, column {column} is not UTF-8; save the task file as UTF-8"
        ) from None
    raw = _parse(path, text)
    try:  # a NUL in a data path is reported by the path check, with its index
        rest = {k: v for k, v in raw.items() if k != "data"} if isinstance(raw, dict) else raw
        field = _field_with(rest, "\x00")
    except RecursionError:
        raise TaskFormatError(f"{path}: nested too deeply to be a task") from None
    if field is not None:
        raise TaskFormatError(f"{path}: {field}: contains a NUL character")
    return raw


def resolve_task_file(path: Path) -> Path:
    """The task file itself, given a file or a directory holding one."""
    path = Path(path)
    if path.is_dir():
        found = [path / n for n in TASK_FILE_NAMES if (path / n).is_file()]
        if not found:
            raise TaskFormatError(
                f"{path}: directory has no task file (expected one of {', '.join(TASK_FILE_NAMES)})"
            )
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise TaskFormatError(f"{path}: directory has several task files ({names}); keep one")
        return found[0]
    if not path.is_file():
        raise TaskFormatError(f"{path}: no such task file or directory")
    return path


def load_task(path: Path, *, allow_outside_data: bool = False) -> Task:
    """Load and validate a task file (or a directory containing ``task.yaml``/``task.json``).

    A data path outside the task file's folder (``data: /etc``, ``data: ../..``) is an
    error unless `allow_outside_data` is set.
    """
    file = resolve_task_file(path).resolve()
    raw = _read(file)
    if not isinstance(raw, dict):
        raise TaskFormatError(
            f"{file}: the task must be a mapping with name, data and turns, "
            f"got {type(raw).__name__}"
        )
    if "source" in raw:
        raise TaskFormatError(f"{file}: source: unknown field")
    if not raw.get("turns"):
        raise TaskFormatError(f"{file}: turns: a task needs at least one turn")
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{_loc(tuple(e['loc']))}: {e['msg']}" for e in exc.errors())
        raise TaskFormatError(f"{file}: {problems}") from exc
    data: list[Path] = []
    for i, entry in enumerate(task.data):
        try:
            resolved = (file.parent / entry.expanduser()).resolve()
            exists = resolved.exists()
        except (OSError, ValueError, RuntimeError) as exc:
            raise TaskFormatError(f"{file}: data[{i}]: unusable path: {exc}") from None
        if not exists:
            raise TaskFormatError(f"{file}: data[{i}]: {resolved} does not exist")
        if not allow_outside_data and not resolved.is_relative_to(file.parent):
            raise TaskFormatError(
                f"{file}: data[{i}]: {resolved} lies outside the task's folder "
                f"{file.parent}; the agent would read it. Allow it explicitly "
                "(stateguard run --allow-outside-data) if that is intended"
            )
        if resolved.is_dir() and file.is_relative_to(resolved):
            raise TaskFormatError(
                f"{file}: data[{i}]: directory {resolved} contains the task file, whose gold "
                "answers the agent could then read; put the data in a subdirectory"
            )
        data.append(resolved)
    names = [p.name for p in data]
    if len(data) > 1 and len(set(names)) != len(names):
        raise TaskFormatError(f"{file}: data: two entries share a file name ({names})")
    return task.model_copy(update={"data": tuple(data), "source": file})


def task_from_data_dir(data_dir: Path, name: str | None = None) -> Task:
    """A task without predefined turns over ``data_dir`` (for interactive chat)."""
    data_dir = Path(data_dir).resolve()
    if not data_dir.is_dir():
        raise TaskFormatError(f"{data_dir}: not a directory")
    return Task(name=name or data_dir.name or "chat", data=(data_dir,))
