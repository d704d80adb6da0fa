"""The task format: loading YAML/JSON files and directories, and precise format errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from worker_helpers import write_mini_task

from stateguard.errors import TaskFormatError
from stateguard.worker.tasks import load_task, task_from_data_dir


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_load_task_from_directory(tmp_path: Path, fmt: str) -> None:
    root = write_mini_task(tmp_path, fmt)
    task = load_task(root)
    assert task.name == "mini"
    assert len(task.turns) == 2
    assert task.turns[0].answer == 6
    assert all(p.is_absolute() and p.exists() for p in task.data)
    assert task.source is not None and task.source.parent == root.resolve()
    assert load_task(task.source) == task


def test_shipped_example_loads() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "unit_economics"
    task = load_task(root)
    assert 8 <= len(task.turns) <= 12
    assert task.data[0].is_dir() and (task.data[0] / "orders.csv").stat().st_size < 1_000_000


def _task_file(tmp_path: Path, body: object, name: str = "t.json") -> Path:
    (tmp_path / "d.csv").write_text("a\n1\n")
    path = tmp_path / name
    path.write_text(json.dumps(body) if name.endswith(".json") else str(body))
    return path


GOOD_TURN = {"question": "q?"}
MALFORMED = [
    ({"data": ["d.csv"], "turns": [GOOD_TURN]}, "name: Field required"),
    ({"name": "x", "data": ["d.csv"], "turns": []}, "turns: a task needs at least one turn"),
    ({"name": "x", "turns": [GOOD_TURN, {"context": "c"}]}, "turns[1].question (turn 2)"),
    ({"name": "x", "turns": [GOOD_TURN, GOOD_TURN, {"question": "  "}]}, "turns[2].question"),
    ({"name": "x", "turns": [{"question": "q", "answer": [1, 2]}]}, "turns[0].answer (turn 1)"),
    (
        {"name": "x", "turns": [{"question": "q", "answer": {"a": [1]}}]},
        "field 'a' must be a string, number or boolean",
    ),
    ({"name": "x", "turns": [{"question": "q", "tolerance": -1}]}, "turns[0].tolerance"),
    ({"name": "x", "turns": [{"question": "q", "gold": 1}]}, "turns[0].gold (turn 1)"),
    ({"name": "x", "data": ["missing.csv"], "turns": [GOOD_TURN]}, "data[0]:"),
    ({"name": "x", "data": ["."], "turns": [GOOD_TURN]}, "contains the task file"),
    ({"name": "x", "data": ["d.csv", "./d.csv"], "turns": [GOOD_TURN]}, "share a file name"),
    ([1, 2], "must be a mapping"),
]


@pytest.mark.parametrize(("body", "needle"), MALFORMED)
def test_malformed_tasks_name_file_and_field(tmp_path: Path, body: object, needle: str) -> None:
    path = _task_file(tmp_path, body)
    with pytest.raises(TaskFormatError) as info:
        load_task(path)
    message = str(info.value)
    assert str(path.resolve()) in message
    assert needle in message


def test_unreadable_or_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(TaskFormatError, match=r"t\.yaml: not valid YAML"):
        load_task(bad)
    (tmp_path / "sub").mkdir()
    with pytest.raises(TaskFormatError, match="no task file"):
        load_task(tmp_path / "sub")
    with pytest.raises(TaskFormatError, match="no such task file"):
        load_task(tmp_path / "nope.yaml")
    (tmp_path / "t.txt").write_text("x")
    with pytest.raises(TaskFormatError, match=r"\.yaml, \.yml or \.json"):
        load_task(tmp_path / "t.txt")


def test_directory_with_two_task_files_is_ambiguous(tmp_path: Path) -> None:
    write_mini_task(tmp_path, "yaml")
    write_mini_task(tmp_path, "json")
    with pytest.raises(TaskFormatError, match="several task files"):
        load_task(tmp_path)


def test_task_from_data_dir(tmp_path: Path) -> None:
    task = task_from_data_dir(tmp_path)
    assert task.turns == () and task.data == (tmp_path.resolve(),)
    with pytest.raises(TaskFormatError, match="not a directory"):
        task_from_data_dir(tmp_path / "missing")


def test_data_outside_the_task_folder_needs_an_explicit_flag(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.csv").write_text("a\n1\n")
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    path = task_dir / "t.json"
    for data in ("/etc", "../elsewhere"):
        path.write_text(json.dumps({"name": "t", "data": data, "turns": [{"question": "q"}]}))
        with pytest.raises(TaskFormatError, match=r"data\[0\]: .* lies outside the task's folder"):
            load_task(path)
    assert load_task(path, allow_outside_data=True).data == (outside.resolve(),)


@pytest.mark.parametrize("data", ["da\x00ta", "x" * 5000])
def test_unusable_data_paths_are_format_errors(tmp_path: Path, data: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"name": "t", "data": data, "turns": [{"question": "q"}]}))
    with pytest.raises(TaskFormatError, match=r"t.json: data\[0\]: "):
        load_task(path)
