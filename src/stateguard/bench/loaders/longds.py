"""Loader for LongDS tasks, in the release layout and in the flat layout.

Release layout (as the benchmark's own runner reads it)::

    dataset/task/longds/task_list.json                 [{task_domain, dataset_name, task_id}]
    dataset/task/longds/{domain}/{dataset}/{taskN}/task.json   (+ task.py, task.ipynb,
                                                               metadata.json: not read)
    dataset/data/longds/{domain}/{dataset}/{taskN}/data/       the task's input files

Flat layout: ``<task_dir>/task.json`` with ``<task_dir>/data/`` beside it.

``task.json`` is a JSON list of turns::

    {"turn_id": 1, "context": "...", "question": "...", "answer": <any JSON value>,
     "code": "reference code"}

A dict ``answer`` may hold ``tolerance`` / ``tolerance_note`` (also accepted beside
``answer``); they are moved out of the gold. ``BenchTurn.tolerance`` gets the tolerance,
``meta["tolerance_note"]`` the note (the judge reads both, see `judges.longds`).

Task ids are ``domain/dataset/taskN`` in the release layout (the domain is also
``BenchTask.domain``), the folder name in the flat layout. Path convention: reference
code reads its inputs as ``data/<file>`` (the runner exposes ``BenchTask.data_dir``
read-only as ``data/``); `PathMap` rewrites other paths, e.g. absolute ones.

Cross-turn dependencies come from the comments of the reference code (``# Based on
results from Task 5``, ``# Depends on Tasks 1, 8, and 9``); see
`parse_dependency_comments`.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateguard.bench.tasks import BenchTask, BenchTurn, SuiteLoad, TaskRejection
from stateguard.errors import TaskFormatError

TASK_FILE = "task.json"
TASK_LIST = "task_list.json"
DATA_DIR = "data"
BENCHMARK = "longds"
_TOLERANCE_KEYS = ("tolerance", "tolerance_note")

_NUM = r"\d+"
# Separators inside a list of task numbers; ranges are marked by a dash ("-", "--", en or
# em dash) or "to"/"through".
_RANGE_SEP = r"\s*(?:-{1,2}|–|—|\bto\b|\bthrough\b)\s*"
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


_MAX_RANGE = 10_000
"""The most tasks one range may name (``Tasks 1-999999999`` is a malformed task, not a
billion dependencies)."""


def _expand(items: str) -> list[int]:
    """Expand ``"1, 8, and 9"`` / ``"2-4"`` / ``"14/17"`` into task numbers.

    A range naming more than `_MAX_RANGE` tasks raises `TaskFormatError`.
    """
    numbers: list[int] = []
    for match in _ITEM.finditer(items):
        start = int(match["a"])
        end = int(match["b"]) if match["b"] else start
        if end < start:
            start, end = end, start
        if end - start >= _MAX_RANGE:
            raise TaskFormatError(
                f"the task range {match[0]!r} names {end - start + 1:,} tasks "
                f"(a range names at most {_MAX_RANGE:,})"
            )
        numbers.extend(range(start, end + 1))
    return numbers


def parse_dependency_comments(code: str, turn_id: int) -> tuple[int, ...]:
    """Earlier turns named by the ``#`` comments of ``code`` (sorted, unique).

    Every task reference in every comment counts: ``Task 3``, ``Tasks 1, 8, and 9``,
    ``Task 14/17``, ``Tasks 2-4`` / ``2--4`` / ``2–4`` (ranges, inclusive), ``Depends on:
    Task 2 and Task 6``, ``Based on (the results of) Task 5``, ``from Task 5``; ``Turn N``
    is read like ``Task N``. Only turns ``1 <= n < turn_id`` are kept: references to the
    current or later turns are ignored. Text inside string literals is not a comment.
    """
    found: set[int] = set()
    for comment in _comments(code):
        for ref in _TASK_REF.finditer(comment):
            found.update(n for n in _expand(ref["items"]) if 1 <= n < turn_id)
    return tuple(sorted(found))


def _split_tolerance(
    raw: dict[str, Any], path: Path, index: int
) -> tuple[Any, float | None, dict[str, Any]]:
    """Separate the gold answer from the tolerance keys (inside a dict ``answer`` or beside).

    ``answer`` may be any JSON value; only a dict answer can carry ``tolerance`` /
    ``tolerance_note`` inside it. Returns ``(gold, tolerance, meta)``; meta carries
    ``tolerance_note`` and, for a tolerance written as a percentage string (``"2%"``),
    ``tolerance_mode="relative"``.
    """
    if "answer" not in raw:
        raise TaskFormatError(f"{path}: turn #{index}: field 'answer' is required")
    answer = raw["answer"]
    inner: dict[str, Any] = answer if isinstance(answer, dict) else {}
    gold = answer
    if isinstance(answer, dict):
        gold = {k: v for k, v in answer.items() if k not in _TOLERANCE_KEYS}
        if not gold and answer:
            raise TaskFormatError(f"{path}: turn #{index}: field 'answer' has no required fields")
    meta: dict[str, Any] = {}
    note = inner.get("tolerance_note", raw.get("tolerance_note"))
    if note is not None:
        if not isinstance(note, str):
            raise TaskFormatError(f"{path}: turn #{index}: field 'tolerance_note' must be a string")
        meta["tolerance_note"] = note
    raw_tolerance = inner.get("tolerance", raw.get("tolerance"))
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


class PathMap(BaseModel):
    """Rewrite of a path prefix in reference code (``/data/longds/{domain}/...`` -> ``data``).

    ``prefix`` may use ``{domain}``, ``{dataset}`` and ``{task}``, filled per task; every
    occurrence of the filled prefix in a turn's ``code`` is replaced by ``target``.
    """

    model_config = ConfigDict(frozen=True)

    prefix: str = Field(min_length=1)
    target: str

    @classmethod
    def parse(cls, text: str) -> PathMap:
        """``PREFIX=TARGET`` (as given on the command line)."""
        prefix, sep, target = text.partition("=")
        if not sep or not prefix:
            raise TaskFormatError(f"path mapping {text!r}: expected PREFIX=TARGET")
        return cls(prefix=prefix, target=target)

    def apply(self, code: str, where: dict[str, str]) -> str:
        """``code`` with the filled prefix replaced."""
        try:
            prefix = self.prefix.format(**where)
        except (KeyError, IndexError, ValueError) as exc:
            raise TaskFormatError(
                f"path mapping {self.prefix!r}: only {{domain}}, {{dataset}} and {{task}} "
                f"can be filled ({exc})"
            ) from exc
        return code.replace(prefix, self.target)


def _read_turns(path: Path) -> list[dict[str, Any]]:
    try:
        raw_turns = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskFormatError(f"{path}: file not found") from exc
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot read: {exc}") from exc
    except (RecursionError, ValueError) as exc:  # nested too deeply; a huge integer
        raise TaskFormatError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(raw_turns, list) or not raw_turns:
        raise TaskFormatError(f"{path}: top level must be a non-empty JSON list of turns")
    return raw_turns


def load_longds_task(
    task_dir: Path | str,
    domain: str | None = None,
    *,
    task_id: str | None = None,
    data_dir: Path | None = None,
    path_maps: tuple[PathMap, ...] = (),
    turn_limit: int | None = None,
    coordinates: dict[str, str] | None = None,
) -> BenchTask:
    """Load ``<task_dir>/task.json`` into a `BenchTask`.

    Defaults (the flat layout, ``task.json`` beside ``data/``): task id = the folder
    name, data = ``<task_dir>/data``. `scan_longds` passes the release layout's id
    (``domain/dataset/taskN``) and parallel data folder. ``turn_limit`` keeps the first
    turns only; ``coordinates`` fill `PathMap` placeholders (``dataset``). Turns must be
    numbered 1..n in file order. Raises `TaskFormatError`
    naming the file, the turn and the field when the file is malformed.
    """
    task_dir = Path(task_dir).resolve()
    path = task_dir / TASK_FILE
    raw_turns = _read_turns(path)
    where = {"domain": domain or "", "dataset": "", "task": task_dir.name, **(coordinates or {})}
    turns: list[BenchTurn] = []
    for index, raw in enumerate(raw_turns[:turn_limit] if turn_limit else raw_turns):
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
        for mapping in path_maps:
            code = mapping.apply(code, where)
        gold, tolerance, turn_meta = _split_tolerance(raw, path, index)
        try:
            depends_on = parse_dependency_comments(code, turn_id)
        except TaskFormatError as exc:
            raise TaskFormatError(f"{path}: turn #{index}: field 'code': {exc}") from None
        turns.append(
            BenchTurn(
                turn_id=turn_id,
                context=context,
                question=question,
                gold=gold,
                reference_code=code or None,
                depends_on=depends_on,
                tolerance=tolerance,
                meta=turn_meta,
            )
        )
    if data_dir is None:
        data_dir = task_dir / DATA_DIR
    try:
        return BenchTask(
            task_id=task_id or task_dir.name,
            suite="longds",
            domain=domain,
            data_dir=data_dir if data_dir.is_dir() else None,
            turns=tuple(turns),
        )
    except ValidationError as exc:
        raise TaskFormatError(f"{path}: {exc.errors()[0]['msg']}") from exc


def load_longds_suite(root: Path | str, domain: str | None = None) -> list[BenchTask]:
    """Load every task under ``root`` (any layout `scan_longds` accepts); first error raises."""
    loaded = scan_longds(root, domain=domain)
    if loaded.rejected:
        raise TaskFormatError(loaded.rejected[0].reason)
    return list(loaded.tasks)


class _Located(BaseModel):
    """One task folder found on disk, with its release-layout coordinates (if any)."""

    task_dir: Path
    task_id: str
    domain: str | None = None
    dataset: str | None = None
    data_dir: Path | None = None


def _release_root(path: Path) -> Path | None:
    """The ``.../task/longds`` folder at or above ``path``, when ``path`` is in that layout."""
    if (path / "task" / BENCHMARK).is_dir():
        return path / "task" / BENCHMARK
    if path.name == "task" and (path / BENCHMARK).is_dir():
        return path / BENCHMARK
    for candidate in (path, *path.parents):
        if candidate.name == BENCHMARK and candidate.parent.name == "task":
            return candidate
        if (candidate / TASK_LIST).is_file():
            return candidate
    return None


def _locate(task_dir: Path, release: Path | None) -> _Located:
    if release is None or not task_dir.is_relative_to(release):
        return _Located(task_dir=task_dir, task_id=task_dir.name)
    rel = task_dir.relative_to(release).parts
    if len(rel) != 3:
        return _Located(task_dir=task_dir, task_id="/".join(rel) or task_dir.name)
    domain, dataset, name = rel
    data = release.parent.parent / DATA_DIR / release.name / domain / dataset / name / DATA_DIR
    if not data.is_dir() and (task_dir / DATA_DIR).is_dir():
        data = task_dir / DATA_DIR
    return _Located(
        task_dir=task_dir,
        task_id=f"{domain}/{dataset}/{name}",
        domain=domain,
        dataset=dataset,
        data_dir=data,
    )


def _listed(release: Path, scope: Path) -> tuple[list[Path], list[TaskRejection]]:
    """Task folders in ``task_list.json`` order (those under ``scope``), and bad entries."""
    path = release / TASK_LIST
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot read the task list: {exc}") from exc
    if not isinstance(entries, list):
        raise TaskFormatError(f"{path}: top level must be a JSON list of tasks")
    found: list[Path] = []
    bad: list[TaskRejection] = []
    for i, entry in enumerate(entries):
        keys = ("task_domain", "dataset_name", "task_id")
        if not isinstance(entry, dict) or any(entry.get(k) in (None, "") for k in keys):
            bad.append(
                TaskRejection(
                    task_id=f"{TASK_LIST}[{i}]",
                    source=str(path),
                    reason=f"{path}: entry #{i}: needs fields {list(keys)}, got {entry!r}",
                )
            )
            continue
        name = str(entry["task_id"])
        folder = release / str(entry["task_domain"]) / str(entry["dataset_name"])
        candidates = [folder / name] + ([folder / f"task{name}"] if name.isdigit() else [])
        task_dir = next((c for c in candidates if (c / TASK_FILE).is_file()), candidates[0])
        if task_dir.is_relative_to(scope):
            found.append(task_dir)
    return found, bad


def scan_longds(
    root: Path | str,
    *,
    domain: str | None = None,
    path_maps: tuple[PathMap, ...] = (),
    start_index: int = 0,
    task_limit: int | None = None,
    turn_limit: int | None = None,
) -> SuiteLoad:
    """Every LongDS task under ``root``, each failing task rejected with its reason.

    ``root`` may be the release's dataset root (holding ``task/longds/``), ``task/longds/``
    itself, a domain or dataset folder inside it, one task folder, or a folder of
    flat-layout tasks (``*/task.json`` with ``data/`` beside). In the release layout the
    order is ``task_list.json``'s when present (else sorted paths), task ids are
    ``domain/dataset/taskN`` and data comes from the parallel ``data/longds/`` tree.
    ``start_index`` / ``task_limit`` cut the ordered list and ``turn_limit`` each task,
    as the official runner's options do. ``domain`` sets the domain of flat-layout tasks.
    """
    root = Path(root).resolve()
    release = _release_root(root)
    scope = release if release is not None and release.is_relative_to(root) else root
    rejected: list[TaskRejection] = []
    if (root / TASK_FILE).is_file():
        dirs = [root]
    elif release is not None and (release / TASK_LIST).is_file():
        dirs, rejected = _listed(release, scope)
    elif release is not None:
        dirs = sorted(p.parent for p in scope.rglob(TASK_FILE))
    else:
        dirs = sorted(p.parent for p in root.glob(f"*/{TASK_FILE}"))
    dirs = dirs[start_index:]
    if task_limit is not None:
        dirs = dirs[:task_limit]
    tasks: list[BenchTask] = []
    for task_dir in dirs:
        located = _locate(task_dir, release)
        try:
            tasks.append(
                load_longds_task(
                    task_dir,
                    located.domain or domain,
                    task_id=located.task_id,
                    data_dir=located.data_dir,
                    path_maps=path_maps,
                    turn_limit=turn_limit,
                    coordinates={"dataset": located.dataset or ""},
                )
            )
        except TaskFormatError as exc:
            rejected.append(
                TaskRejection(task_id=located.task_id, source=str(task_dir), reason=str(exc))
            )
    return SuiteLoad(tasks=tuple(tasks), rejected=tuple(rejected))
