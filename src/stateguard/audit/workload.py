"""KramaBench-style workload files: tasks with a query, gold answer and data sources.

A workload is a JSON list of tasks (or ``{"tasks": [...]}``)::

    {"id": "wildfire-easy-1", "query": "...", "answer": 42, "answer_type": "numeric_exact",
     "data_sources": ["acres_burned_by_state.csv"],
     "subtasks": [{"id": "...", "query": "...", "answer": ..., "answer_type": ..., ...}]}

Subtasks have the same fields. As in KramaBench's own files, ``data_sources`` may be
a string or a list of strings at every level; its entries are bare file names, paths,
globs or folders, resolved against a lake by `stateguard.audit.source_refs`. Malformed
tasks raise `WorkloadFormatError` naming the file and the field.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from stateguard.audit.errors import WorkloadFormatError

AnswerType = Literal[
    "numeric_exact", "numeric_approximate", "string_exact", "string_approximate", "list_exact"
]


class WorkloadTask(BaseModel):
    """One task (or subtask) of a workload."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    query: str
    answer: Any = None
    answer_type: AnswerType | str | None = None
    data_sources: tuple[str, ...] = ()
    subtasks: tuple[WorkloadTask, ...] = ()

    @field_validator("data_sources", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """A string is one source; null is none."""
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,) if value.strip() else ()
        return value

    def all_sources(self) -> tuple[str, ...]:
        """The sources of the task and of its subtasks (depth first), each once."""
        found = list(self.data_sources)
        for sub in self.subtasks:
            found += sub.all_sources()
        return tuple(dict.fromkeys(found))

    def turns(self) -> tuple[WorkloadTask, ...]:
        """The task as a multi-turn session: its subtasks in order (depth first), then
        the main question itself (without its subtasks)."""
        out: list[WorkloadTask] = []
        for sub in self.subtasks:
            out.extend(sub.turns())
        out.append(self.model_copy(update={"subtasks": ()}))
        return tuple(out)


class WorkloadRejection(BaseModel):
    """A task of a workload file that does not load, and why (file, index, field)."""

    model_config = ConfigDict(frozen=True)

    index: int
    task_id: str
    """The task's ``id`` when it has one, else ``tasks[INDEX]``."""
    reason: str


def scan_workload(path: Path | str) -> tuple[list[WorkloadTask], list[WorkloadRejection]]:
    """The tasks of a workload file that load, and those that do not (with the reason).

    An unreadable file, or one that is not a list of tasks, raises `WorkloadFormatError`.
    """
    file = Path(path)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WorkloadFormatError(f"{file}: cannot read the workload: {exc}") from exc
    items = raw.get("tasks") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise WorkloadFormatError(f"{file}: expected a list of tasks or {{'tasks': [...]}}")
    tasks: list[WorkloadTask] = []
    rejected: list[WorkloadRejection] = []
    for i, item in enumerate(items):
        try:
            tasks.append(WorkloadTask.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raw_id = item.get("id") if isinstance(item, dict) else None
            rejected.append(
                WorkloadRejection(
                    index=i,
                    task_id=raw_id if isinstance(raw_id, str) and raw_id else f"tasks[{i}]",
                    reason=f"{file}: tasks[{i}].{where}: {err['msg']}",
                )
            )
    return tasks, rejected


def load_workload(path: Path | str) -> list[WorkloadTask]:
    """The tasks of a workload file; the first malformed one raises `WorkloadFormatError`."""
    tasks, rejected = scan_workload(path)
    if rejected:
        raise WorkloadFormatError(rejected[0].reason)
    return tasks


def matches_source(path: str, gold: str) -> bool:
    """Whether a lake path (relative) is the gold data source `gold`.

    Gold sources name a file by its relative path, a trailing part of it, its
    bare file name, or a glob pattern.
    """
    g = gold.strip().lstrip("./")
    if not g:
        return False
    return (
        path == g
        or path.endswith("/" + g)
        or path.rsplit("/", 1)[-1] == g
        or fnmatch.fnmatch(path, g)
        or fnmatch.fnmatch(path.rsplit("/", 1)[-1], g)
    )
