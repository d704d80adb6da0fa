"""Text the worker shows its model: observations, manager notes, short code summaries."""

from __future__ import annotations

import ast
import re

from stateguard.kernel import ExecutionResult
from stateguard.manager import Hint

TRUNCATION_MARKER = "\n... [{n} characters omitted] ...\n"
_TRACEBACK_HEAD = 4
_TRACEBACK_TAIL = 8
NO_OUTPUT = "(the cell ran without output; end it with an expression or use print() to see a value)"
"""The observation of a cell that showed nothing (the loop may say what its names hold)."""


def truncate_head_tail(text: str, limit: int) -> str:
    """Keep the head and the tail of ``text`` within about ``limit`` chars, marking the cut.

    The result is never longer than ``limit`` plus the marker.
    """
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    omitted = len(text) - head - tail
    return text[:head] + TRUNCATION_MARKER.format(n=omitted) + text[len(text) - tail :]


def result_display_index(execution: ExecutionResult) -> int | None:
    """Index in ``displays`` of the execute_result bundle (the last one matching `result`)."""
    if execution.result is None:
        return None
    for i in range(len(execution.displays) - 1, -1, -1):
        if execution.displays[i].data.get("text/plain") == execution.result:
            return i
    return None


def _traceback_text(execution: ExecutionResult) -> str:
    assert execution.error is not None
    err = execution.error
    lines = "\n".join(err.traceback).splitlines()
    if len(lines) > _TRACEBACK_HEAD + _TRACEBACK_TAIL:
        cut = len(lines) - _TRACEBACK_HEAD - _TRACEBACK_TAIL
        lines = [
            *lines[:_TRACEBACK_HEAD],
            f"... [{cut} traceback lines omitted] ...",
            *lines[-_TRACEBACK_TAIL:],
        ]
    header = f"Error: {err.ename}: {err.evalue}"
    body = "\n".join(lines).strip()
    return header if not body else f"{header}\n{body}"


_SHAPE = re.compile(r"\((\d+),\s*(\d+)?\)")


def shape_words(code: str, result: str | None) -> str | None:
    """``181 rows, 7 columns`` for a cell whose value is a ``.shape`` (``(181, 7)``;
    ``181 values`` for a Series' ``(181,)``): a small model reads a count off words, not
    off a tuple. None for any other cell or result."""
    if result is None or (found := _SHAPE.fullmatch(result.strip())) is None:
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    last = tree.body[-1] if tree.body else None
    if not (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Attribute)
        and last.value.attr == "shape"
    ):
        return None
    rows, columns = found.groups()
    if columns is None:
        return f"{rows} value{'s' if rows != '1' else ''}"
    return (
        f"{rows} row{'s' if rows != '1' else ''}, {columns} column{'s' if columns != '1' else ''}"
    )


def format_observation(execution: ExecutionResult, limit: int, code: str = "") -> str:
    """What the model sees after a cell ran: output, displays, result, errors (head+tail
    cut); the result of a ``.shape`` of ``code`` in words too (`shape_words`)."""
    parts: list[str] = []
    if execution.stdout.strip():
        parts.append("Output:\n" + execution.stdout.rstrip())
    images = 0
    skip = result_display_index(execution)
    for i, display in enumerate(execution.displays):
        if i == skip:
            continue
        if "image/png" in display.data:
            images += 1
        elif isinstance(display.data.get("text/plain"), str):
            parts.append("Displayed:\n" + display.data["text/plain"].rstrip())
    if execution.result is not None:
        words = shape_words(code, execution.result)
        parts.append("Result:\n" + execution.result.rstrip() + (f": {words}" if words else ""))
    if execution.stderr.strip():
        parts.append("Stderr:\n" + execution.stderr.rstrip())
    if images:
        parts.append(f"[{images} image{'s' if images > 1 else ''} displayed]")
    if execution.status == "timeout":
        assert execution.error is not None
        parts.append(
            f"Error: {execution.error.evalue}. Variables assigned before the interruption "
            "are kept; try a cheaper computation."
        )
    elif execution.status == "dead":
        assert execution.error is not None
        parts.append(f"Error: {execution.error.evalue}")
    elif execution.error is not None:
        parts.append(_traceback_text(execution))
    if not parts:
        return NO_OUTPUT
    return truncate_head_tail("\n".join(parts), limit)


def format_hint(hint: Hint) -> str:
    """A manager hint as user content; ``hint.text`` is included verbatim."""
    if hint.kind == "repair":
        head = "Manager note on your answer (reference only: verify it in your session)"
    else:
        head = "Manager note (reference only: an observation to verify, not an instruction)"
    return f"{head}:\n{hint.text}"


def first_code_line(code: str, width: int = 100) -> str:
    """The first meaningful line of a cell (comments and blank lines skipped), shortened."""
    lines = [ln.strip() for ln in code.splitlines()]
    meaningful = [ln for ln in lines if ln and not ln.startswith("#")]
    line = meaningful[0] if meaningful else (lines[0] if lines else "")
    more = len(meaningful) > 1
    if len(line) > width:
        line = line[: width - 1] + "…"
    elif more:
        line += " …"
    return line
