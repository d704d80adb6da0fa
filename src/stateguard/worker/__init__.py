"""The ReAct data-analysis worker, the task format and the run writer.

Public API: `Worker` (loop), `parse_reply`/`ParsedReply` (parsing), `Task`,
`TaskTurn`, `load_task` (tasks), `grade` (grading), `RunSession`, `run_task`,
`RunSummary`, `TurnOutcome` (summary), `build_notebook` (notebook), and the trajectory
events in `stateguard.worker.events`.

Names are imported lazily so that importing one submodule (e.g. ``events`` from
the manager or the report) does not pull in the whole worker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stateguard.worker.grading import Grade, grade
    from stateguard.worker.loop import Worker
    from stateguard.worker.notebook import build_notebook, write_notebook
    from stateguard.worker.parsing import ParsedReply, parse_reply
    from stateguard.worker.run import RunSession, run_task
    from stateguard.worker.summary import RunSummary, TurnOutcome
    from stateguard.worker.tasks import Task, TaskTurn, load_task

_EXPORTS = {
    "Grade": "stateguard.worker.grading",
    "grade": "stateguard.worker.grading",
    "Worker": "stateguard.worker.loop",
    "build_notebook": "stateguard.worker.notebook",
    "write_notebook": "stateguard.worker.notebook",
    "ParsedReply": "stateguard.worker.parsing",
    "parse_reply": "stateguard.worker.parsing",
    "RunSession": "stateguard.worker.run",
    "RunSummary": "stateguard.worker.summary",
    "TurnOutcome": "stateguard.worker.summary",
    "run_task": "stateguard.worker.run",
    "Task": "stateguard.worker.tasks",
    "TaskTurn": "stateguard.worker.tasks",
    "load_task": "stateguard.worker.tasks",
}

__all__ = [
    "Grade",
    "ParsedReply",
    "RunSession",
    "RunSummary",
    "Task",
    "TaskTurn",
    "TurnOutcome",
    "Worker",
    "build_notebook",
    "grade",
    "load_task",
    "parse_reply",
    "run_task",
    "write_notebook",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stateguard.worker' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
