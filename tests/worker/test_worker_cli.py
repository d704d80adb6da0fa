"""`stateguard run` and `stateguard chat` through the CLI, against a real HTTP fake endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer
from test_worker_example import ReferencePlayer
from typer.testing import CliRunner
from worker_helpers import write_mini_task

from stateguard.cli.main import app
from stateguard.llm import ChatMessage
from stateguard.worker.tasks import load_task

F = "```"
ENV_VARS = (
    "STATEGUARD_BACKEND",
    "STATEGUARD_BASE_URL",
    "STATEGUARD_MODEL",
    "STATEGUARD_API_KEY",
    "STATEGUARD_MODEL_PATH",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No model configuration leaks in from the environment or a stateguard.toml."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)


@pytest.mark.kernel
def test_run_against_an_openai_compatible_server(tmp_path: Path) -> None:
    task_dir = write_mini_task(tmp_path / "task")
    replies = [
        f"Load it.\n{F}python\nimport pandas as pd\ndf = pd.read_csv('data/t.csv')\n"
        f"int(df.a.sum())\n{F}",
        "<answer>6</answer>",
        f"{F}python\nfloat(df.b.mean())\n{F}",
        "<answer>20.0</answer>",
    ]
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(replies) as server:
        result = CliRunner().invoke(
            app,
            [
                "run",
                str(task_dir),
                "--manager",
                "none",
                "--out",
                str(run_dir),
                "--base-url",
                server.base_url,
                "--model",
                "fake-model",
                "--max-steps",
                "5",
            ],
        )
        bodies = server.bodies
    assert result.exit_code == 0, result.output
    assert "correct: 2/2" in result.output
    assert f"run directory: {run_dir.resolve()}" in result.output
    assert len(bodies) == 4
    assert all(b["model"] == "fake-model" for b in bodies)
    assert bodies[0]["messages"][0]["role"] == "system"
    assert "What is the sum of column a?" in bodies[0]["messages"][-1]["content"]
    assert "Result:\n6" in bodies[1]["messages"][-1]["content"]
    answers = json.loads((run_dir / "answers.json").read_text())
    assert [t["answer"] for t in answers["turns"]] == ["6", "20.0"]
    assert answers["model"] == "openai:fake-model"
    # Token usage comes from the server's usage block (11 prompt, 7 completion per call).
    assert [t["prompt_tokens"] for t in answers["turns"]] == [22, 22]
    assert [t["completion_tokens"] for t in answers["turns"]] == [14, 14]
    assert (run_dir / "trajectory.jsonl").stat().st_size > 0
    assert (run_dir / "analysis.ipynb").is_file()


def test_no_backend_configured_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("stateguard.llm.config.llama_cpp_available", lambda: False)
    task_dir = write_mini_task(tmp_path / "task")
    for argv in (["run", str(task_dir), "--manager", "none"], ["chat", str(task_dir / "data")]):
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 2, result.output
        assert "no chat model is configured" in result.output
        assert "pip install 'stateguard[local]'" in result.output
        assert "--base-url" in result.output
    assert not Path("runs").exists()


def test_task_format_errors_exit_2(tmp_path: Path) -> None:
    (tmp_path / "task.yaml").write_text("name: x\nturns:\n  - context: only context\n")
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--manager", "none"])
    assert result.exit_code == 2
    assert "task.yaml" in result.output and "turns[0].question (turn 1)" in result.output


def test_unknown_manager_exits_2(tmp_path: Path) -> None:
    task_dir = write_mini_task(tmp_path / "task")
    flags = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    result = CliRunner().invoke(app, ["run", str(task_dir), "--manager", "smart", *flags])
    assert result.exit_code == 2 and "--manager must be one of" in result.output


@pytest.mark.kernel
def test_chat_turn_by_turn(tmp_path: Path) -> None:
    data = write_mini_task(tmp_path / "task") / "data"
    replies = [
        f"{F}python\nimport pandas as pd\nlen(pd.read_csv('data/t.csv'))\n{F}",
        "<answer>3 rows</answer>",
    ]
    run_dir = tmp_path / "chat-run"
    with FakeOpenAIServer(replies) as server:
        result = CliRunner().invoke(
            app,
            [
                "chat",
                str(data),
                "--manager",
                "none",
                "--out",
                str(run_dir),
                "--base-url",
                server.base_url,
                "--model",
                "fake-model",
            ],
            input="How many rows?\n\n",
        )
    assert result.exit_code == 0, result.output
    assert "How many rows?" in result.output
    assert "answer: 3 rows" in result.output
    assert "len(pd.read_csv('data/t.csv'))" in result.output  # steps are shown
    answers = json.loads((run_dir / "answers.json").read_text())
    assert [(t["question"], t["answer"]) for t in answers["turns"]] == [
        ("How many rows?", "3 rows")
    ]


def manager_schema(request: dict) -> dict:
    """The JSON schema a request asks for (the manager's calls do; the worker's do not)."""
    return ((request.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}


@pytest.mark.kernel
def test_the_manager_can_have_its_own_model(tmp_path: Path) -> None:
    task_dir = write_mini_task(tmp_path / "task")

    worker_calls = 0

    def reply(request: dict) -> str:  # the roles are told apart by model name
        nonlocal worker_calls
        if request["model"] == "manager-model":
            return '{"verdict": "supported"}'
        worker_calls += 1
        if worker_calls == 1:
            return f"{F}python\nprint(6)\n{F}"
        # "of 7": a number no cell printed, which the hybrid manager asks its model about
        return "<answer>6 of 7</answer>"

    with FakeOpenAIServer(reply) as server:
        flags = ["--base-url", server.base_url, "--model", "worker-model"]
        result = CliRunner().invoke(
            app,
            ["run", str(task_dir), "--out", str(tmp_path / "run"), "--max-steps", "3", *flags,
             "--manager", "hybrid", "--manager-model", "manager-model"],
        )  # fmt: skip
        bodies = server.bodies
    assert result.exit_code == 0, result.output
    by_model = {b["model"] for b in bodies}
    assert by_model == {"worker-model", "manager-model"}
    assert all(manager_schema(b) for b in bodies if b["model"] == "manager-model")
    assert not any(manager_schema(b) for b in bodies if b["model"] == "worker-model")


@pytest.mark.kernel
def test_readme_command_runs_the_example_against_an_endpoint(tmp_path: Path) -> None:
    """`stateguard run examples/unit_economics` with only an OpenAI-compatible endpoint set."""
    example = Path(__file__).resolve().parents[2] / "examples" / "unit_economics"
    player = ReferencePlayer(load_task(example))

    def reply(request: dict) -> str:
        # one endpoint serves both roles (the README command): the manager's calls declare
        # the JSON they expect, so they are told apart by that schema, not by wording
        required = manager_schema(request).get("required", [])
        if "issue" in required:
            return '{"issue": "unit economics step", "conclusions": []}'
        if "verdict" in required:
            return '{"verdict": "supported"}'
        return player([ChatMessage(**m) for m in request["messages"]])

    run_dir = tmp_path / "run"
    with FakeOpenAIServer(reply) as server:
        result = CliRunner().invoke(
            app,
            ["run", str(example), "--out", str(run_dir), "--max-steps", "4"],
            env={"STATEGUARD_BASE_URL": server.base_url, "STATEGUARD_MODEL": "fake-model"},
        )
    assert result.exit_code == 0, result.output
    assert "correct: 10/10" in result.output
    answers = json.loads((run_dir / "answers.json").read_text())
    assert answers["manager"] == "hybrid"
    assert (run_dir / "report.html").is_file() and (run_dir / "states.sqlite").is_file()


@pytest.mark.kernel
def test_run_ends_a_stuck_turn_and_says_why(tmp_path: Path) -> None:
    """A model that resends its failing cell: the turn ends with the reason, the run goes on."""
    task_dir = write_mini_task(tmp_path / "task")
    bad = f"{F}python\nt = 1 / 0\n{F}"
    replies = [bad] * 7 + [
        f"{F}python\nimport pandas as pd\nprint(pd.read_csv('data/t.csv').b.mean())\n{F}",
        "<answer>20</answer>",
    ]
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(replies) as server:
        result = CliRunner().invoke(
            app,
            [
                "run",
                str(task_dir),
                "--manager",
                "none",
                "--out",
                str(run_dir),
                "--max-steps",
                "6",
                "--turn-seconds",
                "300",
                "--base-url",
                server.base_url,
                "--model",
                "fake-model",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "repeats a failed cell, not run" in result.output
    assert "no answer: no progress" in result.output
    assert "step 1/6" in result.output
    # the worker's setup cell has its own line and does not take a step of the budget
    assert "setup ▸ the worker loads the data files … ok" in result.output
    assert "step 7/6" not in result.output
    answers = json.loads((run_dir / "answers.json").read_text())
    first, second = answers["turns"]
    assert first["answer"] is None and first["ended"] == "no_progress"
    assert first["invalid_steps"] == 0 and first["repeated_steps"] == 2
    assert second["answer"] == "20" and second["ended"] == "answer"


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("stateguard ")
