"""`run_task` writes a complete run directory: trajectory, answers, notebook."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from worker_helpers import write_mini_task

from stateguard.errors import StateguardError
from stateguard.llm import ScriptedModel
from stateguard.worker import run as run_module
from stateguard.worker.events import AnswerRecorded, StepRecord, dump_event, read_trajectory
from stateguard.worker.run import (
    RunSession,
    check_manager,
    manager_kinds,
    run_task,
)
from stateguard.worker.tasks import load_task

F = "```"

REPLIES = [
    # turn 1: a plot, an error, then the sum
    f"Load and plot.\n{F}python\nimport pandas as pd\nimport matplotlib.pyplot as plt\n"
    f"df = pd.read_csv('data/t.csv')\nplt.plot(df.a, df.b)\nplt.show()\n"
    f"print('loaded', len(df))\n{F}",
    f"{F}python\ndf.nope\n{F}",
    f"{F}python\nint(df.a.sum())\n{F}",
    "<answer>6</answer>",
    # turn 2: malformed, then the (wrong) mean
    "hmm",
    f"{F}python\ndf.b.mean() + 1\n{F}",
    "<answer>21.0</answer>",
]


@pytest.mark.kernel
def test_run_directory(tmp_path: Path) -> None:
    task = load_task(write_mini_task(tmp_path / "task"))
    run_dir = tmp_path / "run"
    seen = []
    summary = run_task(task, ScriptedModel(REPLIES), "none", run_dir, on_event=seen.append)

    # answers.json
    answers = json.loads((run_dir / "answers.json").read_text())
    assert answers["task"] == "mini" and answers["manager"] == "none"
    t1, t2 = answers["turns"]
    assert (t1["turn"], t1["answer"], t1["gold"], t1["correct"]) == (1, "6", 6, True)
    assert (t2["turn"], t2["answer"], t2["gold"], t2["correct"]) == (2, "21.0", 20, False)
    assert (t1["steps"], t1["cells"], t1["invalid_steps"]) == (4, 3, 0)
    assert (t2["steps"], t2["cells"], t2["invalid_steps"]) == (3, 1, 1)
    for key in ("hints", "repairs", "rejected_answers", "manager_llm_calls"):
        assert t1[key] == 0
    assert t1["wall_time"] > 0 and t1["prompt_tokens"] > 0 and t1["completion_tokens"] > 0
    assert summary.correct == 1 and summary.graded == 2
    assert summary.model_dump(mode="json") == answers

    # trajectory.jsonl round-trips, event for event
    events = list(read_trajectory(run_dir / "trajectory.jsonl"))
    assert [dump_event(e) for e in events] == [dump_event(e) for e in seen]
    recorded = [e for e in events if isinstance(e, AnswerRecorded)]
    assert [(e.gold, e.correct) for e in recorded] == [(6, True), (20, False)]

    # analysis.ipynb: valid, with every executed cell and its outputs
    nb = nbformat.read(run_dir / "analysis.ipynb", as_version=4)
    nbformat.validate(nb)
    setup, *code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert "pd.read_csv('data/" in setup.source  # the worker loaded the table first
    assert [c.source.splitlines()[-1] for c in code_cells] == [
        "print('loaded', len(df))",
        "df.nope",
        "int(df.a.sum())",
        "df.b.mean() + 1",
    ]
    first = {o.output_type: o for o in code_cells[0].outputs}
    assert first["stream"].text == "loaded 3\n"
    assert "image/png" in first["display_data"].data
    assert code_cells[1].outputs[-1].output_type == "error"
    assert code_cells[1].outputs[-1].ename == "AttributeError"
    result = code_cells[2].outputs[0]
    assert result.output_type == "execute_result" and result.data["text/plain"] == "6"
    assert result.execution_count == code_cells[2].execution_count
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "What is the mean of b?" in markdown and "**Answer:** 21.0" in markdown

    # the kernel is gone and the data was exposed read-only under workdir/data
    assert (run_dir / "workdir").is_dir()
    with pytest.raises(StateguardError, match="already holds a run"):
        RunSession(task, ScriptedModel([]), run_dir).start()


def test_manager_kinds() -> None:
    with pytest.raises(StateguardError, match="unknown manager 'smart'"):
        check_manager("smart")
    for kind in ("none", "deterministic", "llm", "hybrid", "window", "freeform"):
        check_manager(kind)
    assert manager_kinds()[:4] == ("none", "deterministic", "llm", "hybrid")


def test_the_report_writer_is_injected(tmp_path: Path) -> None:
    task = load_task(write_mini_task(tmp_path / "task"))
    seen: list[Path] = []

    def writer(run_dir: Path) -> Path:
        seen.append(run_dir)
        (run_dir / "report.html").write_text("<html></html>")
        return run_dir / "report.html"

    replies = [
        f"{F}python\nprint(t['a'].sum())\n{F}",
        "<answer>6</answer>",
        f"{F}python\nprint(t['b'].mean())\n{F}",
        "<answer>20.0</answer>",
    ]
    run_dir = tmp_path / "run"
    summary = run_task(task, ScriptedModel(replies), "none", run_dir, report=writer)
    assert seen == [run_dir.resolve()] and summary.report == run_dir.resolve() / "report.html"
    bare = run_task(task, ScriptedModel(replies), "none", tmp_path / "bare")
    assert bare.report is None and not (tmp_path / "bare" / "report.html").exists()


def test_describe_data_lists_files_with_columns_dtypes_and_rows(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x,y\n1,2.5\n3,4.5\n")
    (tmp_path / "bad.csv").write_bytes(b"\xff\xfe\x00broken")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.txt").write_text("hello")
    text = run_module.describe_data(tmp_path)
    assert "- data/a.csv (0.0 KB)\n  columns (dtype): x (int64), y (float64)" in text
    assert "first rows:\n     x   y\n     1 2.5\n     3 4.5\n" in text
    assert "- data/bad.csv" in text  # unreadable by pandas: listed all the same
    assert "- data/sub/notes.txt" in text
    assert run_module.describe_data(None) == ""


def test_data_staging(tmp_path: Path) -> None:
    single_dir = load_task(write_mini_task(tmp_path / "a", "yaml"))
    assert run_module._stage_data(single_dir, tmp_path / "s1") == single_dir.data[0]
    files = load_task(write_mini_task(tmp_path / "b", "json"))  # data: [data/t.csv]
    staged = run_module._stage_data(files, tmp_path / "s2")
    assert staged is not None and staged != files.data[0].parent
    assert sorted(p.name for p in staged.iterdir()) == ["t.csv"]
    assert (staged / "t.csv").read_text() == files.data[0].read_text()
    assert not (staged / "task.json").exists()


@pytest.mark.kernel
def test_a_run_shows_every_top_level_expression_of_a_cell(tmp_path: Path) -> None:
    """The value of an expression above the last one is shown too (IPython's `all`), so
    the model reads the sum it computed on the cell's first line."""
    task = load_task(write_mini_task(tmp_path / "task"))
    replies = [
        f"{F}python\nimport pandas as pd\ndf = pd.read_csv('data/t.csv')\n"
        f"int(df.a.sum())\nx = 1\ndf.b.max() - 1\n{F}",
        "<answer>6</answer>",
        f"{F}python\ndf.b.mean()\n{F}",
        "<answer>20.0</answer>",
    ]
    run_task(task, ScriptedModel(replies), "none", tmp_path / "run")
    events = list(read_trajectory(tmp_path / "run" / "trajectory.jsonl"))
    first = next(e for e in events if isinstance(e, StepRecord) and e.code and "df.a" in e.code)
    shown = first.observation
    assert shown.index("Displayed:\n6") < shown.index("Result:\nnp.int64(29)")
    # the model read the sum, so the answer grounded on it went through
    recorded = [e for e in events if isinstance(e, AnswerRecorded)]
    assert [(e.answer, e.correct) for e in recorded] == [("6", True), ("20.0", True)]
