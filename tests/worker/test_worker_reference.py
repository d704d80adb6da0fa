"""Running a task's reference cells and comparing them with its gold answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from stateguard.worker.reference import mismatches, reference_main, run_cells, same

CELLS = ("x = 2\nx * 3", "y = x + 1\n{'y': y, 'half': y / 2}", "z = 1")


def _task(tmp_path: Path, answers: list[str]) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.csv").write_text("a\n1\n")
    turns = "".join(f"  - question: q{i}\n    answer: {a}\n" for i, a in enumerate(answers))
    path = tmp_path / "task.yaml"
    path.write_text(f"name: t\ndata: data\nturns:\n{turns}")
    return path


def test_cells_share_one_namespace_and_give_their_last_expression(tmp_path: Path) -> None:
    assert run_cells(CELLS, tmp_path) == [6, {"y": 3, "half": 1.5}, None]


def test_mismatches_name_the_turn_and_both_values(tmp_path: Path) -> None:
    answers = run_cells(CELLS[:2], tmp_path)
    assert mismatches(_task(tmp_path, ["6", "{y: 3, half: 1.5}"]), answers) == []
    (tmp_path / "task.yaml").unlink()
    (tmp_path / "data" / "t.csv").unlink()
    (tmp_path / "data").rmdir()
    wrong = mismatches(_task(tmp_path, ["6.1", "{y: 3, half: 1.5}", "1"]), answers)
    assert wrong == [
        "the task has 3 turns, the reference 2",
        "turn 1: the task says 6.1, the reference 6",
    ]


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [(1, 1.0, True), (0.1 + 0.2, 0.3, True), (1, 1.01, False), ({"a": 1}, {"b": 1}, False)],
)
def test_same_compares_numbers_closely_and_mappings_by_field(
    a: object, b: object, equal: bool
) -> None:
    assert same(a, b) is equal


def test_the_command_line_checks_and_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert reference_main("Doc.\nmore", lambda: [1], lambda: ["turn 1: off"], ["--check"]) == 1
    assert "MISMATCH" in capsys.readouterr().out
    assert reference_main("Doc.", lambda: [1, "x"], lambda: [], []) == 0
    assert capsys.readouterr().out == "turn 1: 1\nturn 2: 'x'\n"
