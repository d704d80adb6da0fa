"""Reading run directories: required and optional files, tolerant answers, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_fixture import build_run, parse
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.errors import StateguardError
from stateguard.report import load_run, write_report
from stateguard.state import StateStore
from stateguard.worker.events import AnswerRecorded, TurnStarted, dump_event


def _minimal_run(root: Path, answers: object) -> Path:
    """Two turns in the trajectory and the given answers.json content."""
    run = root / "run"
    run.mkdir()
    events = [
        TurnStarted(turn=1, question="first?"),
        AnswerRecorded(turn=1, answer="a1", steps=2, wall_time=1.5, manager_llm_calls=2),
        TurnStarted(turn=2, question="second?"),
        AnswerRecorded(turn=2, answer="a2", steps=3, wall_time=2.5),
    ]
    (run / "trajectory.jsonl").write_text(
        "".join(dump_event(e) + "\n" for e in events), encoding="utf-8"
    )
    (run / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    return run


@pytest.mark.parametrize("missing", ["trajectory.jsonl", "answers.json"])
def test_missing_required_file_is_named(tmp_path: Path, missing: str) -> None:
    run = build_run(tmp_path, states=False)
    (run / missing).unlink()
    with pytest.raises(StateguardError, match=missing):
        write_report(run)
    assert not (run / "report.html").exists()


def test_missing_run_directory(tmp_path: Path) -> None:
    with pytest.raises(StateguardError, match="does not exist"):
        write_report(tmp_path / "nope")


def test_states_and_notebook_are_optional(tmp_path: Path) -> None:
    run = build_run(tmp_path, states=False, notebook=False)
    page = write_report(run).read_text(encoding="utf-8")
    dom = parse(page)
    assert not dom.with_class("state-node")
    assert not [s for s in dom.tags("svg") if "state-graph" in s.get("class", "")]
    assert "no states recorded" in page
    assert len(dom.with_class("turn")) == 6


def test_empty_state_store_says_so(tmp_path: Path) -> None:
    run = build_run(tmp_path, states=False)
    StateStore(run / "states.sqlite").close()
    page = write_report(run).read_text(encoding="utf-8")
    assert "no states committed" in page
    assert not parse(page).with_class("state-node")


def test_malformed_trajectory_names_file_and_line(tmp_path: Path) -> None:
    run = build_run(tmp_path, states=False)
    with open(run / "trajectory.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"type": "no-such-event", "turn": 1}\n')
    lines = (run / "trajectory.jsonl").read_text(encoding="utf-8").count("\n")
    with pytest.raises(StateguardError, match=rf"trajectory\.jsonl:{lines}"):
        load_run(run)


def test_unreadable_answers_json(tmp_path: Path) -> None:
    run = _minimal_run(tmp_path, [])
    (run / "answers.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StateguardError, match=r"answers\.json"):
        load_run(run)
    (run / "answers.json").write_text('"a string"', encoding="utf-8")
    with pytest.raises(StateguardError, match=r"answers\.json"):
        load_run(run)


def test_run_summary_shape_of_answers_json(tmp_path: Path) -> None:
    """``{"task": …, "turns": [...]}`` with split token counts and per-field verdicts."""
    answers = {
        "task": "unit <economics>",
        "manager": "hybrid",
        "model": "scripted",
        "error": "kernel died",
        "turns": [
            {
                "turn": 1,
                "question": "first?",
                "answer": "a1",
                "gold": {"x": 1},
                "correct": False,
                "fields": {"x": False},
                "hints": 2,
                "repairs": 0,
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "wall_time": 1.5,
                "manager_llm_calls": 2,
                "steps": 2,
            },
            {"turn": 2, "question": "second?", "answer": "a2"},
        ],
    }
    run_dir = _minimal_run(tmp_path, answers)
    run = load_run(run_dir)
    assert run.meta.task == "unit <economics>" and run.meta.error == "kernel died"
    first, second = (t.outcome for t in run.turns)
    assert first.tokens == 120 and first.fields == {"x": False} and first.hints == 2
    assert second.tokens is None and second.correct is None and second.gold is None
    assert second.steps == 3 and second.wall_time == 2.5  # from the trajectory
    assert second.manager_llm_calls == 0
    assert run.summary.graded == 1 and run.summary.accuracy == 0.0
    page = write_report(run_dir).read_text(encoding="utf-8")
    assert "unit &lt;economics&gt;" in page
    assert "run stopped early: kernel died" in page
    assert run_dir.name in page


def test_answers_without_turn_numbers_match_by_position(tmp_path: Path) -> None:
    run = load_run(_minimal_run(tmp_path, [{"answer": "x", "correct": True}, {"steps": 9}]))
    assert [t.turn for t in run.turns] == [1, 2]
    assert run.turns[0].outcome.answer == "x" and run.turns[0].outcome.correct is True
    assert run.turns[1].outcome.steps == 9 and run.turns[1].outcome.answer == "a2"


def test_missing_answer_keys_render_as_dashes(tmp_path: Path) -> None:
    run = _minimal_run(tmp_path, [{}, {}])
    (run / "trajectory.jsonl").write_text(
        dump_event(TurnStarted(turn=1, question="only a question")) + "\n", encoding="utf-8"
    )
    page = write_report(run).read_text(encoding="utf-8")
    dom = parse(page)
    assert len(dom.with_class("turn")) == 2
    assert "no answer" in page
    assert page.count('<span class="dash">—</span>') >= 10


def test_cli_writes_and_prints_the_path(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(out.resolve())
    assert out.is_file()


def test_cli_reports_missing_files(tmp_path: Path) -> None:
    run = build_run(tmp_path, states=False, answers_file=False)
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 2
    assert "answers.json" in result.output
