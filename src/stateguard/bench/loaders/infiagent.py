"""Loader for the InfiAgent-DABench closed-form set.

Files: a questions jsonl (``id, question, concepts, constraints, format, file_name,
level``), a labels jsonl (``id, common_answers: [[name, value], ...]``) and a tables
folder. Each question becomes a single-turn `BenchTask`:

- ``task_id = "infiagent-<id>"``, ``domain`` = the question's level, ``data_dir`` = the
  tables folder (the question's table is ``meta["file_name"]`` in it; a missing table
  sets ``skipped_reason``);
- the turn's ``question`` is the question, the constraints and the format text;
- ``gold = {name: value}`` from ``common_answers`` (a repeated name keeps the last value,
  as the benchmark's scorer does); the raw list is in ``meta["common_answers"]``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.errors import TaskFormatError

QUESTIONS_FILE = "da-dev-questions.jsonl"
LABELS_FILE = "da-dev-labels.jsonl"
TABLES_DIR = "da-dev-tables"

_QUESTION_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": int,
    "question": str,
    "concepts": list,
    "constraints": str,
    "format": str,
    "file_name": str,
    "level": str,
}


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line; bad JSON is a TaskFormatError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TaskFormatError(f"{path}: cannot read: {exc}") from exc
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise TaskFormatError(f"{path}:{number}: line must be a JSON object")
        records.append((number, obj))
    return records


def _check_field(path: Path, line: int, obj: dict[str, Any], field: str, kind: Any) -> Any:
    if field not in obj:
        raise TaskFormatError(f"{path}:{line}: missing field {field!r}")
    value = obj[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TaskFormatError(
            f"{path}:{line}: field {field!r} must be {getattr(kind, '__name__', kind)}, "
            f"got {type(value).__name__}"
        )
    return value


def _parse_labels(path: Path) -> dict[int, list[tuple[str, str]]]:
    labels: dict[int, list[tuple[str, str]]] = {}
    for line, obj in _read_jsonl(path):
        qid = _check_field(path, line, obj, "id", int)
        answers = _check_field(path, line, obj, "common_answers", list)
        pairs = []
        for item in answers:
            if not (
                isinstance(item, list)
                and len(item) == 2
                and isinstance(item[0], str)
                and isinstance(item[1], str | int | float)
            ):
                raise TaskFormatError(
                    f"{path}:{line}: field 'common_answers' must hold [name, value] pairs, "
                    f"got {item!r}"
                )
            pairs.append((item[0], str(item[1])))
        if not pairs:
            raise TaskFormatError(f"{path}:{line}: field 'common_answers' is empty")
        if qid in labels:
            raise TaskFormatError(f"{path}:{line}: duplicate id {qid}")
        labels[qid] = pairs
    return labels


def question_text(obj: dict[str, Any]) -> str:
    """The prompt text of one question: question, constraints and answer format."""
    return (
        f"{obj['question'].strip()}\n\nConstraints:\n{obj['constraints'].strip()}\n\n"
        f"Answer format:\n{obj['format'].strip()}"
    )


def load_infiagent(
    root: Path | str,
    questions_file: str = QUESTIONS_FILE,
    labels_file: str = LABELS_FILE,
    tables_dir: str = TABLES_DIR,
) -> list[BenchTask]:
    """Load every question of the set with its gold answers, in file order.

    Raises `TaskFormatError` naming the file, line number and field for a malformed
    line, a question without labels, or a label without question.
    """
    root = Path(root)
    questions_path, labels_path = root / questions_file, root / labels_file
    labels = _parse_labels(labels_path)
    tables = root / tables_dir
    tasks: list[BenchTask] = []
    seen: set[int] = set()
    for line, obj in _read_jsonl(questions_path):
        for field, kind in _QUESTION_FIELDS.items():
            _check_field(questions_path, line, obj, field, kind)
        qid = obj["id"]
        if qid in seen:
            raise TaskFormatError(f"{questions_path}:{line}: duplicate id {qid}")
        seen.add(qid)
        if qid not in labels:
            raise TaskFormatError(
                f"{questions_path}:{line}: id {qid} has no entry in {labels_path}"
            )
        pairs = labels[qid]
        turn = BenchTurn(
            turn_id=1,
            question=question_text(obj),
            gold=dict(pairs),
            meta={
                "id": qid,
                "file_name": obj["file_name"],
                "concepts": list(obj["concepts"]),
                "level": obj["level"],
                "common_answers": [list(p) for p in pairs],
            },
        )
        table = tables / obj["file_name"]
        skipped = None if table.is_file() else f"missing input file {obj['file_name']} in {tables}"
        tasks.append(
            BenchTask(
                task_id=f"infiagent-{qid}",
                suite="infiagent",
                domain=obj["level"],
                data_dir=tables if tables.is_dir() else None,
                turns=(turn,),
                skipped_reason=skipped,
            )
        )
    orphans = sorted(set(labels) - seen)
    if orphans:
        raise TaskFormatError(
            f"{labels_path}: ids {orphans[:5]} have no question in {questions_path}"
        )
    return tasks
