"""What a run writes: no secret values, and whether the kernel was confined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.kernel.env import REDACTED, register_secret
from stateguard.llm import ScriptedModel
from stateguard.worker.run import run_task
from stateguard.worker.tasks import load_task

pytestmark = pytest.mark.kernel

F = "```"
SECRET = "sk-run-records-0123456789abcdef"


def test_run_records_redact_secrets_and_state_the_confinement(tmp_path: Path) -> None:
    register_secret(SECRET)
    task_dir = tmp_path / "task"
    (task_dir / "data").mkdir(parents=True)
    (task_dir / "data" / "t.csv").write_text("a\n1\n2\n")
    (task_dir / "task.yaml").write_text(
        "name: leak\ndata: data\nturns:\n  - question: What is the key?\n    answer: 3\n"
    )
    model = ScriptedModel(
        [
            f"Print it.\n{F}python\nkey = {SECRET!r}\nprint('the key is', key)\n{F}",
            f"<answer>{SECRET}</answer>",
        ]
    )
    run_dir = tmp_path / "run"
    summary = run_task(load_task(task_dir), model, "none", run_dir)
    written = {
        name: (run_dir / name).read_text(encoding="utf-8")
        for name in ("trajectory.jsonl", "answers.json", "analysis.ipynb")
    }
    if (run_dir / "report.html").exists():
        written["report.html"] = (run_dir / "report.html").read_text(encoding="utf-8")
    for name, text in written.items():
        assert SECRET not in text, name
    assert REDACTED in written["trajectory.jsonl"] and REDACTED in written["analysis.ipynb"]
    answers = json.loads(written["answers.json"])
    assert answers["confinement"]["confined"] is summary.confinement.confined
    if not summary.confinement.confined:
        assert answers["confinement"]["reason"]


def test_an_unconfined_run_says_so_on_the_terminal_and_in_answers_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATEGUARD_SANDBOX", "off")
    monkeypatch.setenv("COLUMNS", "200")
    task_dir = tmp_path / "task"
    (task_dir / "data").mkdir(parents=True)
    (task_dir / "data" / "t.csv").write_text("a\n1\n2\n")
    (task_dir / "task.yaml").write_text("name: t\ndata: data\nturns:\n  - question: Sum?\n")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([f"{F}python\n1 + 2\n{F}", "<answer>3</answer>"]))
    config = tmp_path / "model.toml"
    config.write_text(f'[llm]\nbackend = "scripted"\nscript_path = "{script}"\n')
    run_dir = tmp_path / "run"
    argv = ["run", str(task_dir), "--manager", "none", "--out", str(run_dir)]
    result = CliRunner().invoke(app, [*argv, "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "kernel UNCONFINED: the sandbox is turned off" in result.output
    answers = json.loads((run_dir / "answers.json").read_text())
    assert answers["confinement"]["confined"] is False
    assert answers["confinement"]["reason"] == "the sandbox is turned off"


def test_network_is_opt_in_per_task(tmp_path: Path) -> None:
    task_dir = tmp_path / "task"
    (task_dir / "data").mkdir(parents=True)
    (task_dir / "data" / "t.csv").write_text("a\n1\n")
    (task_dir / "task.yaml").write_text(
        "name: net\ndata: data\nnetwork: true\nturns:\n  - question: q\n"
    )
    cell = f"{F}python\nimport socket\n[n for _, n in socket.if_nameindex()]\n{F}"
    model = ScriptedModel([cell, "<answer>x</answer>"])
    summary = run_task(load_task(task_dir), model, "none", tmp_path / "run")
    assert summary.confinement is not None
    if not summary.confinement.confined:
        pytest.skip("kernel is unconfined; it has the host's network anyway")
    assert summary.confinement.network == "host"
    trajectory = (tmp_path / "run" / "trajectory.jsonl").read_text()
    assert "['lo']" not in trajectory  # the host's interfaces, not a loopback-only namespace
