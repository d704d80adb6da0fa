"""An equality filter that matches no row: a value the column never holds.

``sales[sales["region"] == "Online"]`` runs, selects nothing, and whatever is
computed from it (a sum of 0, a mean of NaN) looks like a result. `equality_filters`
reads from a cell's code every comparison of a DataFrame column with a constant
(``df["col"] == v``, ``df.col == v``, ``v == df["col"]``, ``df["col"].isin([v, ...])``);
`absent_filters` asks the kernel, in a copy-on-write probe (any ``probe(code,
timeout)`` callable: `Executor.run_probe`, the verifier's `Environment.probe`), which of
them match no row, and `describe` words the note: the column's values, whether the value is there
as text, and which other frame's column holds it ("'Online' is a value of
orders['channel']").
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from stateguard.kernel import ProbeResult, namespace

Probe = Callable[..., ProbeResult]
"""``probe(code, timeout=...)``: runs code on a throw-away fork of the session."""

_MAX_CHECKS = 12
_T = TypeVar("_T")


class AbsentFilter(BaseModel):
    """A filter value the column does not hold (from the kernel's `absent_values`)."""

    model_config = ConfigDict(frozen=True)

    frame: str
    column: str
    value: str
    """The value's ``repr``."""
    distinct: int
    common: list[str]
    as_text: bool
    elsewhere: list[str]


def frame_column(node: ast.expr) -> tuple[str, str] | None:
    """(frame, column) of ``frame["column"]`` or ``frame.column``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return node.value.id, key.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    return None


def column_assignments(code: str) -> list[tuple[tuple[str, str], ast.Assign]]:
    """``((frame, column), node)`` of each ``frame['column'] = …`` of ``code`` (one target,
    a subscript of a named frame); none when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        written = frame_column(target)
        if written is not None and isinstance(target, ast.Subscript):
            out.append((written, node))
    return out


def _constant(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
    ):
        return True, -node.operand.value
    return False, None


def equality_filters(code: str) -> list[tuple[str, str, Any]]:
    """Each ``(frame, column, value)`` the code compares for equality (see the module)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: list[tuple[str, str, Any]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
            left, right = node.left, node.comparators[0]
            for side, other in ((left, right), (right, left)):
                column = frame_column(side)
                is_const, value = _constant(other)
                if column is not None and is_const:
                    found.append((*column, value))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "isin"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.List | ast.Tuple | ast.Set)
        ):
            column = frame_column(node.func.value)
            if column is None:
                continue
            for element in node.args[0].elts:
                is_const, value = _constant(element)
                if is_const:
                    found.append((*column, value))
    return list(dict.fromkeys(found))[:_MAX_CHECKS]


def absent_filters(probe: Probe, code: str, timeout: float = 20.0) -> list[AbsentFilter]:
    """The equality filters of ``code`` that match no row of the session as it stands."""
    checks = equality_filters(code)
    if not checks:
        return []
    rows = probe_json(probe, namespace.call("absent_values", checks), timeout)
    try:
        return [AbsentFilter.model_validate(r) for r in rows or []]
    except ValueError:  # a namespace that forged the probe's output: say nothing
        return []


def probe_rows(
    probe: Probe,
    helper: str,
    keyed: dict[tuple[str, ...], _T],
    parse: Callable[[_T, list[Any]], Any],
    timeout: float,
) -> list[Any]:
    """Run the kernel-side ``helper`` on the keys of ``keyed`` in a probe; for each row it
    prints that starts with one of the keys, ``parse(keyed[key], rest of the row)``. A row
    ``parse`` cannot read (a namespace that forged the probe's output) voids them all."""
    rows = probe_json(probe, namespace.call(helper, list(keyed)), timeout)
    width = len(next(iter(keyed), ()))
    out = []
    try:
        for row in rows or []:
            item = keyed.get(tuple(row[:width]))
            if item is not None:
                out.append(parse(item, list(row[width:])))
    except (TypeError, ValueError, IndexError):
        return []
    return out


def probe_json(probe: Probe, cell: str, timeout: float) -> Any:
    """The JSON a kernel-side helper printed last, run in a probe; None if it failed (a
    probe is a courtesy: it never fails the step)."""
    try:
        result = probe(cell, timeout=timeout)
        return json.loads(result.stdout.strip().splitlines()[-1]) if result.ok else None
    except Exception:
        return None


def describe(found: list[AbsentFilter]) -> str:
    """The note for the model."""
    parts = []
    for f in found[:3]:
        shown = ", ".join(repr(v) for v in f.common)
        more = f", … ({f.distinct} distinct)" if f.distinct > len(f.common) else ""
        text = (
            f"`{f.frame}[{f.column!r}] == {f.value}` matches no row: "
            f"`{f.frame}[{f.column!r}]` holds {shown}{more}"
        )
        if f.as_text:
            text += f"; it holds {f.value} as text (the types differ)"
        if f.elsewhere:
            text += f"; {f.value} is a value of " + ", ".join(f"`{e}`" for e in f.elsewhere)
        parts.append(text)
    return "Note: a filter selected nothing. " + "; ".join(parts) + "."
