"""Build ``analysis.ipynb`` from trajectory events: every executed cell with its outputs.

Markdown cells carry the turn's context and question, the worker's thought,
manager hints and the turn's answer; code cells carry the executed code with its
outputs (stdout, displays incl. ``image/png``, the execute_result, stderr, error).
Steps that ran no code (answers, malformed replies) produce no code cell.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import (
    new_code_cell,
    new_markdown_cell,
    new_notebook,
    new_output,
)

from stateguard.kernel import ExecutionResult
from stateguard.kernel.env import scrub
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    StepRecord,
    TrajectoryEvent,
    TurnStarted,
)
from stateguard.worker.formatting import result_display_index

_METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}


def _quote(text: str) -> str:
    return "\n".join("> " + line for line in text.splitlines()) or ">"


def _outputs(execution: ExecutionResult) -> list[NotebookNode]:
    outputs: list[NotebookNode] = []
    if execution.stdout:
        outputs.append(new_output("stream", name="stdout", text=execution.stdout))
    result_index = result_display_index(execution)
    for i, display in enumerate(execution.displays):
        data: dict[str, Any] = dict(display.data)
        if i == result_index:
            outputs.append(
                new_output("execute_result", data=data, execution_count=execution.execution_count)
            )
        else:
            outputs.append(new_output("display_data", data=data))
    if execution.stderr:
        outputs.append(new_output("stream", name="stderr", text=execution.stderr))
    if execution.error is not None:
        err = execution.error
        outputs.append(
            new_output("error", ename=err.ename, evalue=err.evalue, traceback=list(err.traceback))
        )
    return outputs


def build_notebook(events: Iterable[TrajectoryEvent], title: str = "") -> NotebookNode:
    """A valid nbformat v4 notebook of the run described by ``events``."""
    nb = new_notebook(metadata=_METADATA)
    if title:
        nb.cells.append(new_markdown_cell(f"# {title}"))
    for event in events:
        if isinstance(event, TurnStarted):
            text = f"## Turn {event.turn}\n\n"
            if event.context.strip():
                text += f"**Context:** {event.context.strip()}\n\n"
            text += f"**Question:** {event.question.strip()}"
            nb.cells.append(new_markdown_cell(text))
        elif isinstance(event, HintDelivered):
            label = "Manager repair hint" if event.hint.kind == "repair" else "Manager hint"
            nb.cells.append(new_markdown_cell(f"**{label}:**\n\n{_quote(event.hint.text)}"))
        elif isinstance(event, StepRecord) and event.execution is not None:
            if event.thought.strip():
                nb.cells.append(new_markdown_cell(_quote(event.thought.strip())))
            cell = new_code_cell(
                source=event.code or "",
                execution_count=event.execution.execution_count,
                outputs=_outputs(event.execution),
            )
            cell.metadata["stateguard"] = {"turn": event.turn, "step": event.step}
            nb.cells.append(cell)
        elif isinstance(event, AnswerRecorded):
            text = (
                f"**Answer:** {event.answer}"
                if event.answer is not None
                else "**No answer:** the step budget ran out."
            )
            if event.gold is not None:
                verdict = {True: "correct", False: "incorrect", None: "not graded"}[event.correct]
                text += f"\n\n*Gold:* `{event.gold}` ({verdict})"
            nb.cells.append(new_markdown_cell(text))
    return nb


def write_notebook(events: Iterable[TrajectoryEvent], path: Path, title: str = "") -> Path:
    """Build, validate and write the notebook; returns ``path``."""
    nb = build_notebook(events, title)
    nbformat.validate(nb)
    tmp = path.with_suffix(".ipynb.tmp")
    tmp.write_text(scrub(nbformat.writes(nb)), encoding="utf-8")
    tmp.replace(path)
    return path
