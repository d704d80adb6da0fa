"""The manager decision benchmark: held-out activations replayed and scored against labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.llm.scripted import ScriptedModel
from stateguard.manager.policies.llm import action_message
from stateguard.train.dataset import DatasetCard
from stateguard.train.evaluate import evaluate, held_out
from stateguard.train.records import ManagerTrajectory


def _activations(trajs: list[ManagerTrajectory], split_tasks: set[str] | None, limit=None):
    return held_out(trajs, split_tasks, limit, 0)


def test_deterministic_scores_what_it_proposed(
    mini_dataset: tuple[Path, DatasetCard], mini_trajectories: list[ManagerTrajectory]
) -> None:
    data, _ = mini_dataset
    report = evaluate(data, "deterministic", split="all")
    chosen = _activations(mini_trajectories, None)
    assert report.selected == len(chosen) and report.drift == 0
    # the live replay asks it in the recorded views: it repeats its recorded proposals
    agree = sum((a.proposed or {}).get("kind") in a.label_kinds for _, a in chosen)
    assert report.decision_accuracy == pytest.approx(agree / len(chosen), abs=1e-4)
    labelled = [a for _, a in chosen if a.label_kind == "REPAIR"]
    caught = [a for a in labelled if (a.proposed or {}).get("kind") == "REPAIR"]
    assert report.repairs_labelled == len(labelled) > len(caught) > 0
    assert report.repair_recall == pytest.approx(len(caught) / len(labelled), abs=1e-4)
    assert report.repair_precision == 1.0  # it repairs only on lineage proof
    assert report.protocol_valid_rate == 1.0


def test_none_takes_no_action(
    mini_dataset: tuple[Path, DatasetCard], mini_trajectories: list[ManagerTrajectory]
) -> None:
    data, _ = mini_dataset
    report = evaluate(data, "none", split="all")
    assert report.decision_accuracy == 0.0 and report.repair_recall == 0.0
    assert report.repair_precision is None and report.protocol_valid_rate is None
    assert report.confusion["REPAIR"] == {"ABSTAIN": report.repairs_labelled}


def test_an_llm_replying_the_labels_scores_perfectly(
    mini_dataset: tuple[Path, DatasetCard], mini_trajectories: list[ManagerTrajectory]
) -> None:
    data, card = mini_dataset
    chosen = _activations(mini_trajectories, set(card.validation_tasks), limit=4)
    model = ScriptedModel([action_message(a.label_action) for _, a in chosen])
    report = evaluate(data, "llm", model=model, limit=4)
    assert report.scored == 4 and report.decision_accuracy == 1.0
    assert report.protocol_valid_rate == 1.0 and report.llm_calls == 4
    assert model.remaining == 0
    # each request is the conversation the LLM policy has there: system prompt first
    assert all(r.messages[0].role == "system" for r in model.requests)


def test_invalid_replies_tools_and_illegal_actions_are_scored(
    mini_dataset: tuple[Path, DatasetCard], mini_trajectories: list[ManagerTrajectory]
) -> None:
    data, card = mini_dataset
    chosen = _activations(mini_trajectories, set(card.validation_tasks), limit=3)
    first, second, third = (a for _, a in chosen)
    replies = [
        "I think the state is fine.",  # not an action: corrected, then valid
        action_message(first.label_action),
        '{"kind": "trace_lineage", "name": "scores"}',  # a tool, then the label
        action_message(second.label_action),
        '{"kind": "ROLLBACK"}',  # not an action kind: corrected
        '{"kind": "ABANDON_STATE", "reason": "x"}'
        if third.observation.draft is None
        else '{"kind": "OPEN_STATE", "issue": "again"}',  # illegal in that phase
    ]
    model = ScriptedModel(replies)
    report = evaluate(data, "llm", model=model, limit=3)
    assert report.scored == 3 and report.llm_calls == 6
    assert report.protocol_valid_rate == pytest.approx(1 / 3, abs=1e-4)
    assert report.decision_accuracy == pytest.approx(2 / 3, abs=1e-4)
    tool_request = model.requests[3]
    assert tool_request.messages[-1].content.startswith("Result of your last action:")
    assert "scores" in tool_request.messages[-1].content
    assert "not one valid action" in model.requests[1].messages[-1].content


def test_cli_eval_json(mini_dataset: tuple[Path, DatasetCard]) -> None:
    data, _ = mini_dataset
    result = CliRunner().invoke(
        app, ["train", "eval", "--data", str(data), "--policy", "none", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["policy"] == "none" and report["split"] == "validation"
    assert report["scored"] > 0


def test_cli_eval_names_a_missing_card(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["train", "eval", "--data", str(tmp_path), "--policy", "none"])
    assert result.exit_code == 1
    assert "card.json" in result.output and "train synth" in result.output


def test_a_spent_time_budget_leaves_activations_unasked(
    mini_dataset: tuple[Path, DatasetCard],
) -> None:
    data, _ = mini_dataset
    model = ScriptedModel(['{"kind": "COMMIT_STATE"}'])
    report = evaluate(data, "llm", model=model, limit=2, time_budget=1e-9)
    assert report.unasked == 2 and report.scored == 0 and report.decision_accuracy is None
    assert model.requests == []
