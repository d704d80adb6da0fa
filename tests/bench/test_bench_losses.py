"""Lost work is impossible to miss: turns not scored, counted by reason, printed first."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from stateguard.bench.losses import loss_category, losses, missing_library, summary_lines
from stateguard.bench.records import TurnResult
from stateguard.cli.main import app


def _turn(turn_id: int, **fields) -> TurnResult:
    return TurnResult(task_id=fields.pop("task_id", "t"), turn_id=turn_id, n_turns=9, **fields)


REASONS = [
    (
        "reference code fails in a clean run: ModuleNotFoundError: No module named 'xgboost'",
        "missing library: xgboost",
    ),
    (
        "reference code fails in a clean run: NameError: name 'model' is not defined (after "
        "an earlier turn): needs the library 'imblearn', which the kernel's Python lacks",
        "missing library: imblearn",
    ),
    (
        "task skipped: missing input file(s) 'All Countries and Economies.csv' (looked in x)",
        "missing input file",
    ),
    ("runner error: StateguardError: boom", "runner error: StateguardError"),
    ("reference code fails in a clean run: KeyError: 'a'", "reference code fails: KeyError"),
    (
        "reference failed: the host refused the values the kernel wrote: x",
        "values refused by the host",
    ),
    ("model m: reference not evaluable: not evaluated", "reference not evaluable by the validator"),
    ("validator 'vis' is not implemented by DSEval", "vis validator (not implemented by DSEval)"),
]


def test_loss_categories() -> None:
    for reason, category in REASONS:
        assert loss_category(reason) == category, reason
    assert missing_library("No module named 'sklearn.ensemble'") == "sklearn"
    assert missing_library("NameError: x") is None


def test_losses_count_skipped_and_excluded_turns_but_not_undecided_ones() -> None:
    results = [
        _turn(1, correct=True),
        _turn(2, correct=False),
        _turn(3, skipped=True, skipped_reason=REASONS[0][0]),
        _turn(4, skipped=True, skipped_reason=REASONS[0][0]),
        _turn(5, correct=None, judge_reason=REASONS[6][0]),
        _turn(6, correct=None, undecided=True),
    ]
    lost = losses(results, tasks_failed=1)
    assert (lost.turns_total, lost.turns_scored, lost.turns_lost) == (6, 2, 3)
    assert lost.skipped_by_reason == {
        "missing library: xgboost": 2,
        "reference not evaluable by the validator": 1,
    }
    assert lost.anything_lost and lost.over_limit
    lines = summary_lines(lost)
    assert lines[0] == "tasks failed: 1, tasks rejected: 0, turns scored: 2 / 6 (3 not scored, 50%)"
    assert lines[1] == "  not scored: 2 × missing library: xgboost"
    clean = losses([_turn(1, correct=True)])
    assert not clean.anything_lost and not clean.over_limit


def _suite(root: Path, with_input: bool) -> Path:
    root.mkdir()
    (root / "_manifest.yaml").write_text("name: X\nversion: 1\n")
    (root / "_inputs").mkdir()
    if with_input:
        (root / "_inputs" / "a b.csv").write_text("x\n1\n")
    (root / "s1.py").write_text(
        '# %%\n"""\nquestion: Read `inputs/a b.csv`.\n"""\n'
        "import pandas as pd\ndf = pd.read_csv('inputs/a b.csv')\n"
    )
    return root


def test_bench_run_prints_losses_first_and_strict_fails_past_a_tenth(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", with_input=False)  # the task is skipped: no kernel
    args = ["bench", "run", "--suite", "dseval", "--path", str(suite)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert said.index("turns scored: 0 / 1") < said.index("turn_accuracy")
    assert "not scored: 1 × missing input file" in said
    assert "1 of 1 turns were not scored, more than 10%" in said and "--strict" in said
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["turns_scored"] == 0 and metrics["turns_total"] == 1
    assert metrics["tasks_failed"] == 0
    assert metrics["skipped_by_reason"] == {"missing input file": 1}

    strict = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run2"), "--strict"])
    assert strict.exit_code == 1
    assert "--strict: 1 of 1 turns were not scored" in " ".join(strict.output.split())
