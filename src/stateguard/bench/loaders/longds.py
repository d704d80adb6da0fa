"""Loader for LongDS-style multi-turn tasks (``<task_dir>/task.json`` + ``<task_dir>/data/``).

``task.json`` is a JSON list of turns::

    {"turn_id": 1, "context": "...", "question": "...",
     "answer": {"field": value, ..., "tolerance": 0.01, "tolerance_note": "..."},
     "tolerance": 0.01, "tolerance_note": "...",      # optional, beside "answer"
     "code": "reference code"}

``answer`` holds the required fields; ``tolerance`` / ``tolerance_note`` may sit inside it
or beside it and are moved out of the gold. ``BenchTurn.tolerance`` gets the tolerance,
``meta["tolerance_note"]`` the note (the judge reads both, see `judges.longds`).

Path convention: reference code reads its inputs as ``data/<file>``; the runner runs the
task with its working directory containing ``data/`` (the task dir itself, or a copy of
``BenchTask.data_dir`` under that name).

Cross-turn dependencies come from comments in the reference code
(``# Depends on Tasks 1, 8, and 9``); see `parse_dependency_comments`.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.errors import TaskFormatError

TASK_FILE = "task.json"
DATA_DIR = "data"
_TOLERANCE_KEYS = ("tolerance", "tolerance_note")

# A dependency comment is a comment mentioning "depend" (depends, dependency, ...);
# task references are only read after that word.
_DEPEND = re.compile(r"depend\w*", re.IGNORECASE)
_NUM = r"\d+"
# Separators inside a list of task numbers; ranges are marked by a dash or "to"/"through".
_RANGE_SEP = r"\s*(?:-|–|—|\bto\b|\bthrough\b)\s*"
_LIST_SEP = r"\s*(?:,\s*(?:and\s+|&\s*)?|/|&|\band\b|\bor\b)\s*"
_TASK_REF = re.compile(
    rf"\b(?:tasks?|turns?)\b\s*(?:#|no\.?)?\s*"
    rf"(?P<items>{_NUM}(?:(?:{_RANGE_SEP}|{_LIST_SEP}){_NUM})*)",
    re.IGNORECASE,
)
_ITEM = re.compile(rf"(?P<a>{_NUM})(?:{_RANGE_SEP}(?P<b>{_NUM}))?")


def _comments(code: str) -> list[str]:
    """Return the text of every ``#`` comment in ``code`` (tolerates broken code)."""
    try:
        return [
            tok.string[1:]
            for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # Unterminated strings etc.: fall back to a line scan (may read a '#' inside a string).
        return [line.split("#", 1)[1] for line in code.splitlines() if "#" in line]


def _expand(items: str) -> list[int]:
    """Expand ``"1, 8, and 9"`` / ``"2-4"`` / ``"14/17"`` into task numbers."""
    numbers: list[int] = []
    for match in _ITEM.finditer(items):
        start = int(match["a"])
        end = int(match["b"]) if match["b"] else start
        if end < start:
            start, end = end, start
        numbers.extend(range(start, end + 1))
    return numbers


def parse_dependency_comments(code: str, turn_id: int) -> tuple[int, ...]:
    """Earlier turns named by dependency comments in ``code`` (sorted, unique).

    A dependency comment is a ``#`` comment containing "depend" (any case); every task
    reference after that word counts: ``Task 3``, ``Tasks 1, 8, and 9``, ``Task 14/17``,
    ``Tasks 2-4`` / ``2–4`` (ranges, inclusive), ``Depends on: Task 2 and Task 6``;
    ``Turn N`` is read like ``Task N``.
    Only turns ``1 <= n < turn_id`` are kept: references to the current or later turns
    are ignored.
    """
    found: set[int] = set()
    for comment in _comments(code):
        marker = _DEPEND.search(comment)
        if marker is None:
            continue
        for ref in _TASK_REF.finditer(comment, marker.end()):
            found.update(n for n in _expand(ref["items"]) if 1 <= n < turn_id)
    return tuple(sorted(found))


def _split_tolerance(
    raw: dict[str, Any], path: Path, index: int
) -> tuple[dict[str, Any], float | None, dict[str, Any]]:
    """Separate the gold fields from the tolerance keys (inside or beside ``answer``).

    Returns ``(gold, tolerance, meta)``; meta carries ``tolerance_note`` and, for a
    tolerance written as a percentage string (``"2%"``), ``tolerance_mode="relative"``.
    """
    answer = raw.get("answer")
    if not isinstance(answer, dict) or not answer:
        raise TaskFormatError(
            f"{path}: turn #{index}: field 'answer' must be a non-empty JSON object, "
            f"got {type(answer).__name__}"
        )
    gold = {k: v for k, v in answer.items() if k not in _TOLERANCE_KEYS}
    if not gold:
        raise TaskFormatError(f"{path}: turn #{index}: field 'answer' has no required fields")
    meta: dict[str, Any] = {}
    note = answer.get("tolerance_note", raw.get("tolerance_note"))
    if note is not None:
        if not isinstance(note, str):
            raise TaskFormatError(f"{path}: turn #{index}: field 'tolerance_note' must be a string")
        meta["tolerance_note"] = note
    raw_tolerance = answer.get("tolerance", raw.get("tolerance"))
    if raw_tolerance is None:
        return gold, None, meta
    tolerance, is_percent = _parse_tolerance(raw_tolerance, path, index)
    if is_percent:
        meta["tolerance_mode"] = "relative"
    return gold, tolerance, meta


def _parse_tolerance(value: Any, path: Path, index: int) -> tuple[float, bool]:
    """Accept a non-negative number or numeric string; ``"2%"`` gives ``(0.02, True)``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value), False
    if isinstance(value, str):
        text = value.strip()
        is_percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            number = -1.0
        if number >= 0:
            return (number / 100.0 if is_percent else number), is_percent
    raise TaskFormatError(
        f"{path}: turn #{index}: field 'tolerance' must be a non-negative number, got {value!r}"
    )


def _require_str(raw: dict[str, Any], key: str, path: Path, index: int, optional: bool) -> str:
    value = raw.get(key)
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise TaskFormatError(
            f"{path}: turn #{index}: field {key!r} must be a string, got {type(value).__name__}"
        )
    return value


def load_longds_task(task_dir: Path | str, domain: str | None = None) -> BenchTask:
    """Load ``<task_dir>/task.json`` into a `BenchTask` (task_id = the folder name).

    Turns must be numbered 1..n in file order. Raises `TaskFormatError` naming the
    file, the turn and the field when the file is malformed.
    """
    task_dir = Path(task_dir).resolve()
    path = task_dir / TASK_FILE
    try:
        raw_turns = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskFormatError(f"{path}: file not found") from exc
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(raw_turns, list) or not raw_turns:
        raise TaskFormatError(f"{path}: top level must be a non-empty JSON list of turns")

    turns: list[BenchTurn] = []
    for index, raw in enumerate(raw_turns):
        if not isinstance(raw, dict):
            raise TaskFormatError(f"{path}: turn #{index}: must be a JSON object")
        turn_id = raw.get("turn_id")
        if not isinstance(turn_id, int) or isinstance(turn_id, bool) or turn_id != index + 1:
            raise TaskFormatError(
                f"{path}: turn #{index}: field 'turn_id' must be {index + 1}, got {turn_id!r}"
            )
        question = _require_str(raw, "question", path, index, optional=False)
        context = _require_str(raw, "context", path, index, optional=True)
        code = _require_str(raw, "code", path, index, optional=True)
        gold, tolerance, meta = _split_tolerance(raw, path, index)
        turns.append(
            BenchTurn(
                turn_id=turn_id,
                context=context,
                question=question,
                gold=gold,
                reference_code=code or None,
                depends_on=parse_dependency_comments(code, turn_id),
                tolerance=tolerance,
                meta=meta,
            )
        )
    data_dir = task_dir / DATA_DIR
    try:
        return BenchTask(
            task_id=task_dir.name,
            suite="longds",
            domain=domain,
            data_dir=data_dir if data_dir.is_dir() else None,
            turns=tuple(turns),
        )
    except ValidationError as exc:
        raise TaskFormatError(f"{path}: {exc.errors()[0]['msg']}") from exc


def load_longds_suite(root: Path | str, domain: str | None = None) -> list[BenchTask]:
    """Load every ``<root>/*/task.json``, sorted by folder name."""
    root = Path(root)
    return [load_longds_task(p.parent, domain=domain) for p in sorted(root.glob(f"*/{TASK_FILE}"))]
