"""`stateguard verify score` on a recorded trajectory, `verify eval` on a DSEval fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.kernel import ErrorInfo, ExecutionResult
from stateguard.verify import StepVerdict
from stateguard.verify.labelling import LabelledStep
from stateguard.worker.events import AnswerRecorded, StepRecord, TurnStarted, dump_event

FIXTURE = Path(__file__).resolve().parents[1] / "bench" / "fixtures" / "dseval_spec"


def _write(path: Path) -> None:
    events = [
        TurnStarted(turn=1, question="Total revenue?"),
        StepRecord(
            turn=1,
            step=0,
            code="df['revnue'].sum()",
            execution=ExecutionResult(
                status="error", wall_time=0.1, error=ErrorInfo(ename="KeyError", evalue="revnue")
            ),
        ),
        StepRecord(
            turn=1,
            step=1,
            code="df['revenue'].sum()",
            execution=ExecutionResult(status="ok", result="120", wall_time=0.1),
        ),
        StepRecord(turn=1, step=2, answer="The total is 125."),
        AnswerRecorded(turn=1, answer="The total is 125.", steps=3, wall_time=1.0),
    ]
    path.write_text("".join(dump_event(e) + "\n" for e in events), encoding="utf-8")


def test_score_writes_one_verdict_per_step(tmp_path: Path) -> None:
    traj = tmp_path / "trajectory.jsonl"
    _write(traj)
    result = CliRunner().invoke(app, ["verify", "score", str(traj)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    assert [(r["step"], r["score"]) for r in rows] == [(0, 0.5), (1, 1.0), (2, 0.0)]
    assert "125" in rows[2]["rationale"]


def test_an_unknown_verifier_is_refused(tmp_path: Path) -> None:
    traj = tmp_path / "trajectory.jsonl"
    _write(traj)
    result = CliRunner().invoke(app, ["verify", "score", str(traj), "--verifier", "oracle"])
    assert result.exit_code == 2


@pytest.mark.kernel
def test_eval_reports_the_metrics_as_json(tmp_path: Path) -> None:
    out = tmp_path / "steps.jsonl"
    result = CliRunner().invoke(
        app, ["verify", "eval", "--path", str(FIXTURE), "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{") :])
    for key in ("silent_error_recall", "false_zero_rate", "accuracy"):
        assert f"deterministic.{key}" in report and f"execution.{key}" in report
    assert report["steps"] == len(out.read_text().splitlines()) > 0
    assert report["labels"]["1"] > 0


def test_search_refuses_an_unknown_strategy(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["verify", "search", str(tmp_path), "--search", "mcts"])
    assert result.exit_code == 2 and "mcts" in result.output
    bad = CliRunner().invoke(app, ["verify", "search", str(tmp_path), "--verifier", "hybrid>"])
    assert bad.exit_code == 2 and "unknown verifier 'hybrid>'" in bad.output


def _labelled(path: Path) -> None:
    def step(label: float, score: float, output: str) -> LabelledStep:
        v = StepVerdict(score=score, rationale="-", layer="deterministic")
        return LabelledStep(
            session="s",
            turn=1,
            label=label,
            kind="k",
            code="c",
            output=output,
            verdicts={"deterministic": v},
        )

    rows = (
        [step(1.0, 1.0, "ok")]
        + [step(0.0, 0.0, f"bad{i}") for i in range(6)]
        + [step(0.0, 1.0, "bad")]
    )
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")


def test_bon_eval_reads_labelled_steps_and_reports_each_n(tmp_path: Path) -> None:
    data = tmp_path / "labelled.jsonl"
    _labelled(data)
    res = CliRunner().invoke(
        app,
        [
            "verify",
            "bon-eval",
            "--labelled",
            str(data),
            "--n",
            "4",
            "--n",
            "8",
            "--n",
            "16",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["selection"]
    assert [(r["n"], r["turns"]) for r in rows] == [(4, 1), (8, 1), (16, 0)]
    # at N = 8 every variant is in the pool: the verifier ties the reference with one of them
    assert rows[1]["picked_correct"] == {"deterministic": 0.5, "majority": 1 / 8, "random": 1 / 8}
    assert rows[1]["outranked"] == {"deterministic": 0.0}
    text = CliRunner().invoke(app, ["verify", "bon-eval", "--labelled", str(data), "--n", "8"])
    assert "deterministic=0.500" in text.output, text.output
    assert "reference outranked: deterministic=0.000" in text.output
    chained = CliRunner().invoke(
        app,
        ["verify", "bon-eval", "--labelled", str(data), "--verifier", "deterministic>hybrid"],
    )
    assert chained.exit_code == 2 and "no verdicts of ['hybrid']" in chained.output
    missing = CliRunner().invoke(
        app, ["verify", "bon-eval", "--labelled", str(data), "--verifier", "hybrid"]
    )
    assert missing.exit_code == 2 and "no verdicts of ['hybrid']" in missing.output
    neither = CliRunner().invoke(app, ["verify", "bon-eval"])
    assert neither.exit_code == 2 and "--labelled" in neither.output


def test_eval_refuses_a_session_filter_that_matches_nothing(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["verify", "eval", "--path", str(FIXTURE), "--session", "zzz"])
    assert res.exit_code == 2 and "no session" in res.output


def test_eval_turn_limit_labels_only_the_first_turns(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["verify", "eval", "--path", str(FIXTURE), "--turn-limit", "1", "--json"]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout[res.stdout.index("{") :])
    assert report["labels"]["1"] == 1  # one turn: one reference step
