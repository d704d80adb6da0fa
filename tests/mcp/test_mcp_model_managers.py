"""`stateguard mcp --manager llm|hybrid`: the manager's model is configured like
``stateguard run``'s (config file or environment, never a key on the command line).
Driven by the MCP SDK's stdio client against a real kernel."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_mcp_server import run
from typer.testing import CliRunner

from stateguard.cli.main import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import FakeOpenAIServer

POLICY_REPLIES = [
    '{"kind": "OPEN_STATE", "issue": "what the order costs"}',
    '{"kind": "UPDATE_STATE", "conclusions": ["the order costs 24.0"]}',
    '{"kind": "FINALIZE_RELATIONS"}',
    '{"kind": "COMMIT_STATE"}',
]


@pytest.mark.kernel
def test_llm_manager_with_a_scripted_model_from_the_config_file(tmp_path: Path) -> None:
    replies = tmp_path / "policy_replies.json"
    replies.write_text(json.dumps(POLICY_REPLIES))
    config = tmp_path / "stateguard.toml"
    config.write_text(f'[llm]\nbackend = "scripted"\nscript_path = "{replies.name}"\n')
    _, turn, cell, review, states = run(
        tmp_path,
        [
            ("begin_turn", {"question": "What does the order cost?"}),
            ("run_cell", {"code": "rate = 0.12\ncost = 200 * rate\nprint(cost)"}),
            ("propose_answer", {"answer": "The order costs 24.0"}),
            ("states", {}),
        ],
        args=("--manager", "llm", "--config", str(config)),
    )
    assert turn.structured_content["turn"] == 1
    assert cell.structured_content["stdout"] == "24.0\n"
    assert review.structured_content["accepted"] is True
    (state,) = states.structured_content["states"]
    # the issue and conclusion are the scripted policy's, so its model decided
    assert state["issue"] == "what the order costs"
    assert "cost@v1" in state["variables"]


@pytest.mark.kernel
def test_hybrid_manager_reaches_its_model_named_in_the_environment(tmp_path: Path) -> None:
    verdict = json.dumps({"verdict": "supported"})
    with FakeOpenAIServer(lambda request: verdict) as server:
        env = {"STATEGUARD_BASE_URL": server.base_url, "STATEGUARD_MODEL": "manager-model"}
        _, _, _, review = run(
            tmp_path,
            [
                ("begin_turn", {"question": "How many of the orders shipped?"}),
                ("run_cell", {"code": "shipped = 6\nprint(shipped)"}),
                # "of 7": a number no cell showed, which the hybrid manager asks about
                ("propose_answer", {"answer": "6 of 7 orders shipped"}),
            ],
            args=("--manager", "hybrid", "--backend", "openai"),
            env=env,
        )
        bodies = server.bodies
    assert review.structured_content["accepted"] is True
    assert bodies and {b["model"] for b in bodies} == {"manager-model"}
    assert all(b.get("response_format", {}).get("json_schema") for b in bodies)


def test_an_api_key_on_the_command_line_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["mcp", "--manager", "llm", "--api-key", "sk-visible"])
    assert result.exit_code == 2
    assert "STATEGUARD_API_KEY" in result.output


def test_a_model_manager_without_a_usable_model_exits_with_the_reason(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["mcp", "--manager", "hybrid", "--backend", "scripted"])
    assert result.exit_code == 2
    assert "script_path" in result.output


def test_an_unknown_manager_names_the_choices() -> None:
    result = CliRunner().invoke(app, ["mcp", "--manager", "window"])
    assert result.exit_code == 2
    assert "none, deterministic, hybrid, llm" in result.output
