"""Bad task input is a typed error naming the file and the field, never a traceback or a hang.

Non-UTF-8 bytes, NUL characters, over-long and outside data paths in a `stateguard run`
task file; an absurd task range (``Tasks 1-999999999``) and deep nesting in a LongDS task.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateguard.bench.loaders import load_longds_task, parse_dependency_comments
from stateguard.errors import TaskFormatError
from stateguard.worker.tasks import load_task


def _task(root: Path, content: bytes, name: str = "task.yaml") -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "t.csv").write_text("a\n1\n")
    (root / name).write_bytes(content)
    return root


@pytest.mark.parametrize(
    ("content", "field", "what"),
    [
        (b"name: x\ndata: data\nturns:\n  - question: caf\xe9?\n", r"turns\[0\]\.question", "0xe9"),
        (b'name: x\ndata: data\nturns:\n  - question: "a\\0b"\n', r"turns\[0\]\.question", "NUL"),
        (b'name: x\ndata: "da\\0ta"\nturns:\n  - question: q\n', r"data\[0\]", "null byte"),
        (b"name: x\ndata: " + b"a" * 5000 + b"\nturns:\n  - question: q\n", r"data\[0\]", "long"),
        (b"name: x\ndata: /etc\nturns:\n  - question: q\n", r"data\[0\]", "outside"),
        (b"name: x\ndata: ../..\nturns:\n  - question: q\n", r"data\[0\]", "outside"),
    ],
)
def test_a_bad_task_file_names_file_and_field(
    tmp_path: Path, content: bytes, field: str, what: str
) -> None:
    task = _task(tmp_path / "t", content)
    with pytest.raises(TaskFormatError, match=field) as err:
        load_task(task)
    message = str(err.value)
    assert str(task / "task.yaml") in message
    assert what in message or (what == "long" and "too long" in message)


def test_the_non_utf8_error_says_where_the_byte_is(tmp_path: Path) -> None:
    task = _task(tmp_path / "t", b"name: x\ndata: data\nturns:\n  - question: caf\xe9?\n")
    with pytest.raises(TaskFormatError, match="line 4, column 18 is not UTF-8"):
        load_task(task)


def test_a_data_path_outside_the_folder_needs_the_explicit_flag(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "t.csv").write_text("a\n1\n")
    task = _task(tmp_path / "t", b"name: x\ndata: ../shared\nturns:\n  - question: q\n")
    with pytest.raises(TaskFormatError, match="--allow-outside-data"):
        load_task(task)
    assert load_task(task, allow_outside_data=True).data == ((tmp_path / "shared").resolve(),)


def test_an_absurd_task_range_is_a_typed_error_not_a_billion_numbers(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="names 999,999,999 tasks"):
        parse_dependency_comments("# Depends on Tasks 1-999999999\nx = 1", 5)
    assert parse_dependency_comments("# Depends on Tasks 2-4\nx = 1", 5) == (2, 3, 4)
    turns = [
        {"turn_id": 1, "question": "q", "answer": 1, "code": "x = 1"},
        {"turn_id": 2, "question": "q", "answer": 2, "code": "# Based on Tasks 1-999999999\n"},
    ]
    root = tmp_path / "longds"
    root.mkdir()
    (root / "task.json").write_text(json.dumps(turns))
    with pytest.raises(TaskFormatError, match=r"task.json: turn #1: field 'code': the task range"):
        load_longds_task(root)


def test_deeply_nested_or_non_utf8_longds_files_are_typed_errors(tmp_path: Path) -> None:
    deep, broken = tmp_path / "deep", tmp_path / "broken"
    deep.mkdir()
    broken.mkdir()
    (deep / "task.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    (broken / "task.json").write_bytes(b'[{"turn_id": 1, "question": "caf\xe9", "answer": 1}]')
    for root in (deep, broken):
        with pytest.raises(TaskFormatError, match=str(root / "task.json")):
            load_longds_task(root)
