"""What a run writes: no secret values, and whether the kernel was confined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
