"""LongDS loader: the shipped fixture task, its runnable reference code, malformed files."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from stateguard.bench.judges import judge_longds_turn
from stateguard.bench.loaders.longds import load_longds_suite, load_longds_task
from stateguard.errors import TaskFormatError


def _run_cell(code: str, namespace: dict[str, Any]) -> Any:
    """Exec ``code`` in ``namespace`` and return the value of its last expression."""
    tree = ast.parse(code)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr), "fixture code must end with an expression"
    exec(compile(tree, "<turn>", "exec"), namespace)
    return eval(compile(ast.Expression(last.value), "<turn>", "eval"), namespace)


def test_fixture_loads(longds_toy: Path) -> None:
    task = load_longds_task(longds_toy)
    assert task.task_id == "longds_toy"
    assert task.suite == "longds"
    assert task.data_dir == (longds_toy / "data").resolve()
    assert [t.turn_id for t in task.turns] == [1, 2, 3, 4, 5, 6]
    assert [t.depends_on for t in task.turns] == [(), (1,), (1,), (1,), (2, 4), (4, 5)]
    # tolerance inside the answer object (turn 4) and beside it with a note (turn 6)
    assert task.turns[3].tolerance == 0.01 and "tolerance" not in task.turns[3].gold
    assert task.turns[5].tolerance == 0.1
    assert task.turns[5].meta["tolerance_note"].startswith("absolute")
    assert "tolerance_note" not in task.turns[5].gold


def test_fixture_reference_code_reproduces_answers(longds_toy: Path, monkeypatch) -> None:
    monkeypatch.chdir(longds_toy)
    task = load_longds_task(longds_toy)
    namespace: dict[str, Any] = {}
    for turn in task.turns:
        value = _run_cell(turn.reference_code, namespace)
        judgement = judge_longds_turn(turn, value)
        assert judgement.correct, (turn.turn_id, value, judgement.details)


def test_fixture_revision_changes_the_ranking(longds_toy: Path) -> None:
    """The mid-way revision (turn 4) makes turn 2's ranking stale: turn 5 differs."""
    task = load_longds_task(longds_toy)
    before = task.turns[1].gold["region_ranking"]
    after = [r["region"] for r in task.turns[4].gold["ranking"]]
    assert before[0] != after[0]


def test_suite_loader(longds_toy: Path) -> None:
    tasks = load_longds_suite(longds_toy.parent, domain="retail")
    assert [t.task_id for t in tasks] == ["longds_toy"]
    assert tasks[0].domain == "retail"


def _write(tmp_path: Path, content: Any) -> Path:
    task_dir = tmp_path / "bad_task"
    task_dir.mkdir()
    text = content if isinstance(content, str) else json.dumps(content)
    (task_dir / "task.json").write_text(text)
    return task_dir


GOOD_TURN = {"turn_id": 1, "context": "", "question": "q?", "answer": {"x": 1}, "code": "x = 1"}

MALFORMED = [
    ("not_json", "{oops", "invalid JSON"),
    ("not_list", {"turns": []}, "JSON list"),
    ("empty_list", [], "JSON list"),
    ("turn_not_object", [1], "turn #0"),
    ("bad_turn_id", [{**GOOD_TURN, "turn_id": 3}], "'turn_id'"),
    ("missing_question", [{k: v for k, v in GOOD_TURN.items() if k != "question"}], "'question'"),
    ("answer_missing", [{k: v for k, v in GOOD_TURN.items() if k != "answer"}], "'answer'"),
    ("answer_only_tolerance", [{**GOOD_TURN, "answer": {"tolerance": 0.1}}], "no required fields"),
    ("bad_tolerance", [{**GOOD_TURN, "tolerance": "lots"}], "'tolerance'"),
    ("negative_tolerance", [{**GOOD_TURN, "tolerance": -1}], "'tolerance'"),
    ("code_not_string", [{**GOOD_TURN, "code": 3}], "'code'"),
]


@pytest.mark.parametrize(
    ("content", "needle"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_task_file(tmp_path: Path, content: Any, needle: str) -> None:
    task_dir = _write(tmp_path, content)
    with pytest.raises(TaskFormatError) as info:
        load_longds_task(task_dir)
    message = str(info.value)
    assert "task.json" in message and needle in message


def test_missing_task_file(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="file not found"):
        load_longds_task(tmp_path)


def test_percent_tolerance_string_is_relative(tmp_path: Path) -> None:
    task_dir = _write(tmp_path, [{**GOOD_TURN, "answer": {"x": 200, "tolerance": "1%"}}])
    turn = load_longds_task(task_dir).turns[0]
    assert turn.tolerance == pytest.approx(0.01)
    assert turn.meta["tolerance_mode"] == "relative"
    assert judge_longds_turn(turn, {"x": 201.9}).correct
    assert not judge_longds_turn(turn, {"x": 202.5}).correct
