"""InfiAgent-DABench loader on the real dev set and on malformed files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stateguard.bench.loaders.infiagent import load_infiagent
from stateguard.errors import TaskFormatError


def test_dev_set_loads_with_gold(infiagent_root: Path) -> None:
    tasks = load_infiagent(infiagent_root)
    assert len(tasks) == 257
    assert all(len(t.turns) == 1 and t.turns[0].gold for t in tasks)
    assert not any(t.skipped for t in tasks)
    first = tasks[0]
    assert first.task_id == "infiagent-0"
    assert first.data_dir == infiagent_root / "da-dev-tables"
    assert first.domain == "easy"
    turn = first.turns[0]
    assert turn.gold == {"mean_fare": "34.65"}
    assert "Calculate the mean fare paid" in turn.question
    assert "rounded to two decimal places" in turn.question  # format text included
    assert "Rounding off the answer" in turn.question  # constraints included
    assert (first.data_dir / turn.meta["file_name"]).is_file()
    assert {t.domain for t in tasks} == {"easy", "medium", "hard"}


def test_repeated_label_name_keeps_last(infiagent_root: Path) -> None:
    task = next(t for t in load_infiagent(infiagent_root) if t.task_id == "infiagent-734")
    turn = task.turns[0]
    assert turn.gold["correlation_coefficient"] == "0.56"
    assert len(turn.meta["common_answers"]) == 7


QUESTION = {
    "id": 1,
    "question": "q",
    "concepts": ["c"],
    "constraints": "k",
    "format": "@x[v]",
    "file_name": "t.csv",
    "level": "easy",
}
LABEL = {"id": 1, "common_answers": [["x", "1.0"]]}


def _write_set(tmp_path: Path, questions: list, labels: list) -> Path:
    root = tmp_path / "set"
    (root / "da-dev-tables").mkdir(parents=True)
    (root / "da-dev-tables" / "t.csv").write_text("a\n1\n")

    def dump(rows: list) -> str:
        return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"

    (root / "da-dev-questions.jsonl").write_text(dump(questions))
    (root / "da-dev-labels.jsonl").write_text(dump(labels))
    return root


def test_minimal_set_and_missing_table(tmp_path: Path) -> None:
    root = _write_set(
        tmp_path,
        [QUESTION, {**QUESTION, "id": 2, "file_name": "gone.csv"}],
        [LABEL, {**LABEL, "id": 2}],
    )
    tasks = load_infiagent(root)
    assert [t.task_id for t in tasks] == ["infiagent-1", "infiagent-2"]
    assert tasks[0].turns[0].gold == {"x": "1.0"} and not tasks[0].skipped
    assert tasks[1].skipped and "gone.csv" in tasks[1].skipped_reason


MALFORMED = [
    # (id, questions, labels, file, line, needle)
    ("bad_json_question", [QUESTION, "{nope"], [LABEL], "questions", 2, "invalid JSON"),
    (
        "missing_field",
        [{k: v for k, v in QUESTION.items() if k != "format"}],
        [LABEL],
        "questions",
        1,
        "'format'",
    ),
    ("wrong_type", [{**QUESTION, "id": "1"}], [LABEL], "questions", 1, "'id'"),
    ("concepts_not_list", [{**QUESTION, "concepts": "c"}], [LABEL], "questions", 1, "'concepts'"),
    ("no_label", [QUESTION, {**QUESTION, "id": 9}], [LABEL], "questions", 2, "no entry"),
    (
        "label_pairs",
        [QUESTION],
        [{"id": 1, "common_answers": [["x"]]}],
        "labels",
        1,
        "'common_answers'",
    ),
    ("label_missing_answers", [QUESTION], [{"id": 1}], "labels", 1, "'common_answers'"),
    ("label_not_object", [QUESTION], [LABEL, "[1, 2]"], "labels", 2, "JSON object"),
    ("duplicate_question", [QUESTION, QUESTION], [LABEL], "questions", 2, "duplicate id"),
]


@pytest.mark.parametrize(
    ("questions", "labels", "which", "line", "needle"),
    [m[1:] for m in MALFORMED],
    ids=[m[0] for m in MALFORMED],
)
def test_malformed_lines(tmp_path: Path, questions, labels, which, line, needle) -> None:
    root = _write_set(tmp_path, questions, labels)
    with pytest.raises(TaskFormatError) as info:
        load_infiagent(root)
    message = str(info.value)
    assert f"da-dev-{which}.jsonl:{line}:" in message and needle in message


def test_orphan_label(tmp_path: Path) -> None:
    root = _write_set(tmp_path, [QUESTION], [LABEL, {**LABEL, "id": 5}])
    with pytest.raises(TaskFormatError, match=r"ids \[5\] have no question"):
        load_infiagent(root)


def test_missing_file(tmp_path: Path) -> None:
    root = _write_set(tmp_path, [QUESTION], [LABEL])
    (root / "da-dev-labels.jsonl").unlink()
    shutil.rmtree(root / "da-dev-tables")
    with pytest.raises(TaskFormatError, match=r"da-dev-labels\.jsonl"):
        load_infiagent(root)
