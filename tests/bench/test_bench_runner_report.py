"""`bench report`: metrics.json keys, paired comparison, plots and HTML (no kernel)."""

from __future__ import annotations

import json

import pytest
from test_bench_runner_support import synthetic_run
from typer.testing import CliRunner

from stateguard.bench.metrics import METRIC_KEYS
from stateguard.bench.report import build_report, write_metrics
from stateguard.cli.main import app

STABLE_KEYS = (
    "turn_accuracy",
    "task_macro_accuracy",
    "dcr",
    "fault_recall",
    "false_alarm_rate",
    "repairs_fixed",
    "llm_calls_per_turn",
    "turns_total",
    "turns_skipped",
)


def _rows(fixed: bool) -> list[dict]:
    """Four tasks of four turns; turn 2 injected, turns 3-4 depend on it."""
    rows = []
    for task in "abcd":
        right = fixed or task == "d"
        rows += [
            {"task_id": task, "turn_id": 1, "correct": True},
            {
                "task_id": task,
                "turn_id": 2,
                "correct": right,
                "injected": True,
                "flagged": fixed,
                "repaired": fixed,
                "fixed_by_repair": fixed,
                "first_correct": False,
                "fault_effective": True,
                "injection_kind": "stale-reuse",
                "depends_on": [1],
            },
            {"task_id": task, "turn_id": 3, "correct": right, "depends_on": [2]},
            {
                "task_id": task,
                "turn_id": 4,
                "correct": None,
                "skipped": True,
                "skipped_reason": "reference code fails",
                "depends_on": [2],
            },
        ]
    return rows


def test_metrics_json_has_stable_keys_and_nulls(tmp_path) -> None:
    run = synthetic_run(tmp_path / "a", _rows(fixed=False), inject="stale-reuse")
    metrics = write_metrics(run)
    on_disk = json.loads((run / "metrics.json").read_text())
    assert set(METRIC_KEYS) <= set(on_disk) and set(STABLE_KEYS) <= set(on_disk)
    assert on_disk == json.loads(json.dumps(metrics))
    assert on_disk["turns_total"] == 16 and on_disk["turns_skipped"] == 4
    assert on_disk["turn_accuracy"] == pytest.approx(6 / 12)
    assert on_disk["fault_recall"] == 0.0 and on_disk["false_alarm_rate"] == 0.0
    # dependency wrong: turn 3 of a, b, c (all wrong) -> 1.0; dependencies right: turn 2 of
    # every task (3 of 4 wrong) and turn 3 of d (right) -> 3/5; DCR = 1 - 0.6
    assert on_disk["dcr"] == pytest.approx(0.4)
    assert on_disk["injections"]["total"] == 4 and on_disk["injections"]["effective"] == 4
    assert on_disk["skipped"][0] == {"task_id": "a", "turn_id": 4, "reason": "reference code fails"}
    assert on_disk["run"]["inject"] == "stale-reuse"
    clean = synthetic_run(tmp_path / "c", [{"task_id": "x", "turn_id": 1, "correct": True}])
    m = write_metrics(clean)
    assert m["dcr"] is None and m["fault_recall"] is None and m["repair_fix_rate"] is None


def test_report_pairs_runs_and_writes_plots_and_html(tmp_path) -> None:
    a = synthetic_run(tmp_path / "a", _rows(fixed=False), inject="stale-reuse")
    b = synthetic_run(
        tmp_path / "b", _rows(fixed=True), inject="stale-reuse", manager="deterministic"
    )
    summary = build_report(a, b, tmp_path / "rep", n_resamples=2000, seed=1)
    comparison = json.loads((tmp_path / "rep" / "comparison.json").read_text())
    turn = comparison["paired"]["turn_accuracy"]
    assert turn["mean_diff"] == pytest.approx(6 / 12)
    assert turn["ci_low"] <= turn["mean_diff"] <= turn["ci_high"]
    assert turn["n_tasks"] == 4 and turn["n_resamples"] == 2000
    assert comparison["metrics_b"]["fault_recall"] == 1.0
    assert comparison["metrics_a"]["fault_recall"] == 0.0
    for name in ("accuracy_by_position.png", "dcr.png", "paired_difference.png"):
        assert (tmp_path / "rep" / name).read_bytes()[:4] == b"\x89PNG"
    page = summary["html"].read_text()
    assert page.count("data:image/png;base64,") == 3 and "turn_accuracy" in page
    assert (a / "metrics.json").exists() and (b / "metrics.json").exists()


def test_cli_report_prints_table_and_comparison(tmp_path) -> None:
    a = synthetic_run(tmp_path / "a", _rows(fixed=False))
    b = synthetic_run(tmp_path / "b", _rows(fixed=True))
    res = CliRunner().invoke(app, ["bench", "report", str(a), str(b), "--resamples", "500"])
    assert res.exit_code == 0, res.output
    assert "turn_accuracy" in res.output and "B − A" in res.output
    assert (a / "report" / "report.html").exists()
    bad = CliRunner().invoke(app, ["bench", "report", str(tmp_path)])
    assert bad.exit_code == 2 and "not a benchmark run directory" in " ".join(bad.output.split())
