"""What the names of a cell hold, for the observation: after a failure, or a silent cell.

A debugger's first look, given to the model as part of the observation: the line
the error points at, and the type and shape of every variable on that line; after a
cell that ran without showing anything, what the names it created hold. Read
through a copy-on-write probe so the worker's namespace is never touched.
"""

from __future__ import annotations

import ast
import difflib
import json
import re

from stateguard.audit.filterchecks import Probe, probe_json
from stateguard.kernel import ExecutionResult, Executor, namespace
from stateguard.worker.prompts import observation_notes, render

_CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")
_ROOT = re.compile(r"[A-Za-z_]\w*")
_MAX_NAMES = 8


def failing_line(code: str, execution: ExecutionResult) -> tuple[int, str] | None:
    """(line number, source line) of the cell line the traceback points at, if any."""
    if execution.error is None:
        return None
    found = [int(m) for t in execution.error.traceback for m in _CELL_LINE.findall(t)]
    lines = code.splitlines()
    if not found or not 1 <= found[-1] <= len(lines):
        return None
    return found[-1], lines[found[-1] - 1]


def line_names(line: str) -> list[str]:
    """Plain names loaded on one line of code (empty if it does not parse alone)."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return []
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    names = [n.id for n in sorted(loads, key=lambda n: (n.lineno, n.col_offset))]
    return list(dict.fromkeys(names))[:_MAX_NAMES]


def describe_names(probe: Probe, names: list[str]) -> dict[str, str]:
    """Type and shape (or a short repr) of each existing name, read by ``probe`` (a fork
    of the session); {} if the probe fails or prints something else."""
    if not names:
        return {}
    described = probe_json(probe, namespace.call("describe", names), 10)
    if not isinstance(described, dict):
        return {}
    return {str(k): str(v) for k, v in described.items()}


def assigned_names(code: str) -> list[str]:
    """Plain names the code binds (assignment targets, imports, loop and with targets)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
    return list(dict.fromkeys(names))


def bare_annotations(code: str) -> list[str]:
    """Lines like ``total: 1234.56``: annotations without a value, which compute nothing."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    lines = code.splitlines()
    return [
        lines[n.lineno - 1].strip()
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and n.value is None and n.lineno <= len(lines)
    ]


_LABEL_LINE = re.compile(r"^[A-Za-z_][\w ]*:\s*\S")
_KEYWORDS = frozenset(
    {"if", "elif", "else", "for", "while", "def", "class", "try", "except", "finally"}
    | {"with", "lambda", "match", "case", "async"}
)
_MAX_REMOVED = 40


def _label_line(line: str) -> bool:
    return bool(_LABEL_LINE.match(line)) and line.split()[0].rstrip(":") not in _KEYWORDS


def strip_answer_lines(code: str) -> tuple[str, list[str]]:
    """``code`` without its ``label: value`` lines (the answer format written as code), and
    the lines removed: lines that do not parse (``region: North Partner``) and top-level
    annotations without a value (``total: 1234.56``). Unchanged when the rest would not
    parse or nothing would be left."""
    lines = code.splitlines()
    gone: set[int] = set()
    tree = None
    for _ in range(_MAX_REMOVED):
        try:
            tree = ast.parse("\n".join("" if i in gone else ln for i, ln in enumerate(lines)))
            break
        except SyntaxError as exc:
            n = (exc.lineno or 0) - 1
            if not (0 <= n < len(lines)) or n in gone or not _label_line(lines[n]):
                return code, []
            gone.add(n)
    if tree is None:
        return code, []
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and node.value is None and node.lineno <= len(lines):
            gone.add(node.lineno - 1)
    kept = "\n".join(ln for i, ln in enumerate(lines) if i not in gone)
    try:
        if not gone or not ast.parse(kept).body:
            return code, []
    except SyntaxError:  # an annotation over several lines
        return code, []
    return kept, [lines[i].strip() for i in sorted(gone)]


def created_context(kernel: Executor, created: tuple[str, ...] | list[str]) -> str:
    """For a cell that showed nothing: what the names it created hold, or "".

    ``created`` holds versions (``name@vN``, ``df['col']@vN``) or plain names.
    """
    roots = [m.group(0) for v in created if (m := _ROOT.match(v))]
    names = list(dict.fromkeys(roots))[:_MAX_NAMES]
    described = {
        k: v
        for k, v in describe_names(kernel.run_probe, names).items()
        if not v.startswith("module ")
    }
    if not described:
        return ""
    return _note("created", described=_named(described))


_MANY_FOR_ONE = re.compile(
    r"truth value of an? (?:Series|array|DataFrame)[^.]* is ambiguous"
    r"|unsupported format string passed to (?:Series|DataFrame|numpy\.ndarray)\.__format__"
    r"|cannot convert the series to"
    r"|only (?:length-1|size-1) arrays can be converted",
    re.I,
)
"""Errors of many values used where Python needs one (``if s > 0``, ``f"{s:.2f}"``)."""
_MANY = re.compile(r"^(Series|DataFrame|ndarray) shape=\((\d+)")


def many_for_one(execution: ExecutionResult, described: dict[str, str]) -> str:
    """For an error of many values used where one is needed: which names on the failing
    line hold many values, and what to do; "" otherwise."""
    error = execution.error
    if error is None or not _MANY_FOR_ONE.search(f"{error.ename}: {error.evalue}"):
        return ""
    many = [
        _note("holds_many", name=name, count=m.group(2), kind=m.group(1))
        for name, text in described.items()
        if (m := _MANY.match(text)) and int(m.group(2)) > 1
    ]
    if not many:
        return ""
    return _note("many_for_one", many="; ".join(many))


def error_context(kernel: Executor, code: str, execution: ExecutionResult) -> str:
    """A short note on the failing line and its variables, or "" when there is nothing."""
    where = failing_line(code, execution)
    if where is None:
        return ""
    lineno, line = where
    note = _note("error_line", line=lineno, source=line.strip())
    names = line_names(line)
    if not names:
        return note
    described = describe_names(kernel.run_probe, names)
    if described:
        note += "\n" + _note("on_line", described=_named(described))
    advice = many_for_one(execution, described)
    if advice:
        note += "\n" + advice
    if execution.error is not None and execution.error.ename == "KeyError":
        note += missing_key(kernel, execution.error.evalue, names)
        note += looked_up_in(kernel, line, execution.error.evalue)
    if execution.error is not None and _DT_ON_TEXT in execution.error.evalue:
        note += text_dates(kernel.run_probe, line)
    return note


_DT_ON_TEXT = "Can only use .dt accessor with datetimelike values"


def _dt_columns(line: str) -> list[tuple[str, str, str]]:
    """``(frame, column, source)`` for each ``frame['column'].dt`` or ``frame.column.dt``
    on ``line``, ``source`` being the exact text of the column's selection."""
    text = line.strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "dt"):
            continue
        col = node.value
        if (
            isinstance(col, ast.Subscript)
            and isinstance(col.value, ast.Name)
            and isinstance(col.slice, ast.Constant)
            and isinstance(col.slice.value, str)
        ):
            found.append((col.value.id, col.slice.value, col))
        elif isinstance(col, ast.Attribute) and isinstance(col.value, ast.Name):
            found.append((col.value.id, col.attr, col))
    out = []
    for frame, column, col in found:
        source = ast.get_source_segment(text, col)
        if source is not None:
            out.append((frame, column, source))
    return out


def text_dates(probe: Probe, line: str) -> str:
    """For ``.dt`` used on a column that holds dates written as text: the line with
    that column converted by ``pd.to_datetime`` where it is used ("" when the probe
    finds no such column on the line)."""
    uses = _dt_columns(line)
    if not uses:
        return ""
    held = probe_json(probe, namespace.call("date_texts", [[f, c] for f, c, _ in uses]), 10)
    if not isinstance(held, list):
        return ""
    dates = {(str(r[0]), str(r[1])): str(r[2]) for r in held if isinstance(r, list) and len(r) == 3}
    rewritten = line.strip()
    parts = []
    for frame, column, source in uses:
        if (frame, column) not in dates:
            continue
        rewritten = rewritten.replace(f"{source}.dt", f"pd.to_datetime({source}).dt")
        parts.append(_note("text_date", source=source, first=repr(dates[frame, column])))
    if not parts:
        return ""
    return "\n" + _note("text_dates", columns="; ".join(parts), line=rewritten)


def key_holder(line: str, key: str) -> str | None:
    """The expression on `line` a constant subscript ``[key]`` is applied to, when it is a
    value computed on the line (``orders.groupby('r').sum()['m']``), not a plain name."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and str(node.slice.value) == key
            and not isinstance(node.value, ast.Name)
        ):
            return ast.unparse(node.value)
    return None


def looked_up_in(kernel: Executor, line: str, evalue: str) -> str:
    """For a KeyError raised by a key looked up in a value the line computed: what that
    value is ("" when the key was looked up in a name, or the probe says nothing)."""
    key = re.sub(r"^.*?['\"](.+?)['\"].*$", r"\1", evalue.strip())
    holder = key_holder(line, key)
    if holder is None:
        return ""
    try:
        probe = kernel.run_probe(namespace.call("describe_expression", holder), timeout=10)
        described = json.loads(probe.stdout.strip().splitlines()[-1]) if probe.ok else None
    except Exception:  # a probe is a courtesy
        return ""
    if not isinstance(described, str):
        return ""
    return "\n" + _note("looked_up_in", key=repr(key), holder=holder, described=described)


def missing_key(kernel: Executor, evalue: str, names: list[str]) -> str:
    """For a KeyError: the columns of the DataFrames on the failing line, and the closest
    to the missing key ("" when no DataFrame is on it)."""
    try:
        probe = kernel.run_probe(namespace.call("columns", names), timeout=10)
        frames = json.loads(probe.stdout.strip().splitlines()[-1]) if probe.ok else {}
    except Exception:  # a probe is a courtesy
        return ""
    if not frames:
        return ""
    key = re.sub(r"^.*?['\"](.+?)['\"].*$", r"\1", evalue.strip())
    key = key.rsplit(": ", 1)[-1]  # pandas' groupby: "Column not found: net_revenue"
    parts = []
    for name, cols in frames.items():
        close = difflib.get_close_matches(key, cols, n=2, cutoff=0.5)
        part = _note("frame_columns", name=name, columns=", ".join(cols))
        if close:
            part += " " + _note("closest", key=repr(key), close=", ".join(repr(c) for c in close))
        parts.append(part)
    note = "\n" + "; ".join(parts)
    if not any(key in cols for cols in frames.values()):
        note += product_column(key, frames) or held_elsewhere(kernel, key, frames)
    return note


def product_column(key: str, frames: dict[str, list[str]]) -> str:
    """For a missing column named like the prompt's example of a per-row column
    (``a_x_b``, `stateguard.worker.preload.Preload.column_example`) whose two parts are
    columns of a frame on the line: the note that it is made, not loaded, and how ("" for
    any other key)."""
    for name, cols in frames.items():
        for a in cols:
            b = key[len(a) + 3 :] if key.startswith(f"{a}_x_") else ""
            if b in cols and name.isidentifier():
                return "\n" + _note(
                    "product_column", frame=name, key=repr(key), a=repr(a), b=repr(b)
                )
    return ""


def held_elsewhere(kernel: Executor, key: str, frames: dict[str, list[str]]) -> str:
    """For a column no DataFrame on the failing line holds (``frames``: their columns): the
    session's other DataFrames that hold it, the columns each shares with those on the
    line, and, for one frame on the line and a holder with one shared lookup key, the left
    join that adds it (`join_example`); "" when no other frame holds it."""
    names = list(frames)
    parts = []
    example = ""
    for name, shared, unique, columns, keys in holders_of(kernel.run_probe, key, names):
        if shared:
            common = ", ".join(repr(c) for c in shared)
            listed = ", ".join(f"`{n}`" for n in names)
            parts.append(
                _note("held_elsewhere", name=name, key=repr(key), shared=common, frames=listed)
            )
        else:
            parts.append(_note("held_elsewhere_alone", name=name, key=repr(key)))
        if not example and len(frames) == 1 and len(unique) == 1:
            example = join_example(names[0], frames[names[0]], name, columns, unique[0], key)
        elif not example and len(frames) == 1 and not unique and len(keys) == 1:
            example = reverse_join_example(names[0], name, keys[0])
    if not parts:
        return ""
    return "\n" + "; ".join(parts) + "." + (f"\n{example}" if example else "")


def holders_of(
    probe: Probe, key: str, names: list[str]
) -> list[tuple[str, list[str], list[str], list[str], list[str]]]:
    """`stateguard.kernel.namespace.column_holders`, parsed: (frame, shared columns, unique
    shared columns, columns, shared columns unique in a frame among ``names``) for each
    DataFrame outside ``names`` holding ``key`` ([] when none does, or the probe says
    nothing)."""
    found = probe_json(probe, namespace.call("column_holders", key, names), 10)
    try:
        return [
            (
                str(n),
                [str(c) for c in s],
                [str(c) for c in u],
                [str(c) for c in cols],
                [str(c) for c in keys],
            )
            for n, s, u, cols, keys in found or []
        ]
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return []


def join_example(
    frame: str, held: list[str], holder: str, columns: list[str], on: str, key: str
) -> str:
    """The note showing the left join that adds ``key`` (and the other columns of
    ``holder`` that ``frame``, holding ``held``, lacks) to ``frame`` on the lookup key
    ``on`` ("" when a name is not an identifier)."""
    if not (frame.isidentifier() and holder.isidentifier()):
        return ""
    added = [c for c in columns if c not in held and c != on]
    if len(added) > _JOINED_MAX or key not in added:
        added = [key]
    picked = ", ".join(repr(c) for c in [on, *added])
    return _note("join_example", frame=frame, holder=holder, columns=picked, on=repr(on))


def reverse_join_example(frame: str, holder: str, on: str) -> str:
    """The note for a column looked up in a lookup table (``frame``, listing each ``on``
    once) that ``holder``, the table of rows, holds: the left join that gives each row of
    ``holder`` the columns of ``frame``, under a new name (``frame`` may be a selection of
    the lookup table, whose columns should not be left in ``holder``); "" when a name is
    not an identifier."""
    if not (frame.isidentifier() and holder.isidentifier()):
        return ""
    joined = f"{holder}_{frame}"
    return _note("reverse_join_example", frame=frame, holder=holder, on=repr(on), joined=joined)


_JOINED_MAX = 6
"""At most this many columns in a join example (else only the missing one)."""


def _note(section: str, /, **values: object) -> str:
    """The observation note ``section`` of ``observation.md``, filled."""
    return render(observation_notes()[section], **values)


def _named(described: dict[str, str]) -> str:
    """``name is value; …`` for each described name."""
    return "; ".join(_note("named", name=k, value=v) for k, v in described.items())
