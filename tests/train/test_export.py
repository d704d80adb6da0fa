"""Export: chat rows in the LLM policy's protocol, the split, the mix and the card."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from stateguard.llm import ChatMessage
from stateguard.llm.scripted import ScriptedModel
from stateguard.manager import actions as A
from stateguard.manager.policies.llm import LLMPolicy, action_message, parse_action
from stateguard.train.dataset import DatasetCard
from stateguard.train.export import ExportConfig, build_samples, counts, prompt_messages
from stateguard.train.records import Activation, ManagerTrajectory


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rows_are_chat_messages_ending_with_one_action(
    mini_dataset: tuple[Path, DatasetCard],
) -> None:
    out, _ = mini_dataset
    for split in ("train", "validation"):
        rows = _rows(out / f"{split}.jsonl")
        index = _rows(out / f"{split}.index.jsonl")
        assert rows and len(rows) == len(index)
        for row, info in zip(rows, index, strict=True):
            assert list(row) == ["messages"]
            msgs = row["messages"]
            assert all(set(m) == {"role", "content"} and m["content"] for m in msgs)
            roles = [m["role"] for m in msgs]
            assert roles[0] == "system" and roles[-1] == "assistant"
            assert roles[1:] == ["user", "assistant"] * ((len(roles) - 1) // 2)
            actions = [parse_action(m["content"]) for m in msgs if m["role"] == "assistant"]
            assert all(A.is_control(a) for a in actions)
            assert [a.kind for a in actions] == info["actions"]


def test_an_atomic_row_is_what_the_llm_policy_sends_and_replies(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    """Drive the real LLM policy over a recorded review chain with a scripted model replying
    the labels: its requests are the exported prompts, message for message."""
    t = next(t for t in mini_trajectories if t.kind == "clean")
    chain = [a for a in t.activations if a.turn == 2 and a.event == "review"]
    assert [a.label_kind for a in chain] == ["UPDATE_STATE", "FINALIZE_RELATIONS", "COMMIT_STATE"]
    model = ScriptedModel([action_message(a.label_action) for a in chain])
    policy = LLMPolicy(model)
    for a in chain:
        got = policy.next_action(a.observation, None)  # type: ignore[arg-type]
        assert got == a.label_action
    for request, a in zip(model.requests, chain, strict=True):
        assert list(request.messages) == prompt_messages(t.activations, a)
    assert len(model.requests[-1].messages) == 6  # system, observation, 2x (reply, result)


def test_split_is_by_task_and_seeded(mini_trajectories: list[ManagerTrajectory]) -> None:
    cfg = ExportConfig(val_fraction=0.5, split_seed=3)
    a, b = build_samples(mini_trajectories, cfg), build_samples(mini_trajectories, cfg)
    assert [s.row() for s in a.train] == [s.row() for s in b.train]
    train_tasks = {s.info.task_id for s in a.train}
    val_tasks = {s.info.task_id for s in a.validation}
    assert val_tasks == set(a.val_tasks) and len(val_tasks) == 1
    assert not train_tasks & val_tasks


def test_lifecycle_share_mixes_forms(mini_trajectories: list[ManagerTrajectory]) -> None:
    only_atomic = build_samples(
        mini_trajectories, ExportConfig(lifecycle_share=0.0, val_fraction=0)
    )
    only_life = build_samples(mini_trajectories, ExportConfig(lifecycle_share=1.0, val_fraction=0))
    half = build_samples(mini_trajectories, ExportConfig(lifecycle_share=0.5, val_fraction=0))
    assert {s.info.form for s in only_atomic.train} == {"atomic"}
    assert {s.info.form for s in only_life.train} == {"lifecycle"}
    forms = Counter(s.info.form for s in half.train)
    assert forms["lifecycle"] == forms["atomic"] > 0
    assert len(only_atomic.train) == only_atomic.available["atomic"]


def test_a_faulted_lifecycle_repairs_then_commits(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    got = build_samples(mini_trajectories, ExportConfig(lifecycle_share=1.0, val_fraction=0))
    faulted = [s for s in got.train if "REPAIR" in s.info.actions]
    assert faulted
    for s in faulted:
        assert s.info.actions == (
            "OPEN_STATE",
            "REPAIR",
            "UPDATE_STATE",
            "FINALIZE_RELATIONS",
            "COMMIT_STATE",
        )
        # the redo after the repair is a fresh activation: a new observation, not a result
        user = [m.content for m in s.messages if m.role == "user"]
        assert user[2].startswith("Observation:")
        assert len(s.info.trajectory_ids) == 2  # counterfactual + repair of one branch


def test_duplicate_views_are_exported_once(mini_trajectories: list[ManagerTrajectory]) -> None:
    got = build_samples(mini_trajectories, ExportConfig(lifecycle_share=0.0, val_fraction=0))
    rows = [json.dumps(s.row(), sort_keys=True) for s in got.train]
    assert len(rows) == len(set(rows))
    assert got.duplicates > 0  # faulted branches replay the clean turns before the fault


def test_card_counts_equal_the_rows(mini_dataset: tuple[Path, DatasetCard]) -> None:
    out, card = mini_dataset
    for split in ("train", "validation"):
        rows = _rows(out / f"{split}.jsonl")
        index = _rows(out / f"{split}.index.jsonl")
        table = getattr(card, split)
        assert card.rows[split] == len(rows)
        kinds = Counter(
            parse_action(m["content"]).kind
            for r in rows
            for m in r["messages"]
            if m["role"] == "assistant"
        )
        assert table["actions"] == dict(kinds)
        assert table["decisions"] == dict(Counter(i["decision"] for i in index))
        assert table["decisions"] == dict(
            Counter(parse_action(r["messages"][-1]["content"]).kind for r in rows)
        )
        assert sum(table["rows_by_form"].values()) == len(rows)
        assert sum(table["rows_by_injector"].values()) == len(rows)
        assert table["rows_by_suite"] == {"dseval": len(rows)}
        assert table["rows_by_kind"] == dict(Counter(i["kind"] for i in index))
        rels = Counter(
            r["type"]
            for row in rows
            for m in row["messages"]
            if m["role"] == "assistant"
            for r in json.loads(m["content"]).get("relations", [])
        )
        assert table["relation_types"] == dict(rels)
    md = (out / "card.md").read_text(encoding="utf-8")
    assert f"Split seed {card.export.split_seed}" in md
    assert f"filter rate (faulted branches): {card.filter_rate:.3f}" in md


def test_counts_of_an_empty_split_are_empty() -> None:
    assert all(v == {} for v in counts([]).values())


def test_prompt_of_a_fresh_activation_is_system_and_observation(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    t = mini_trajectories[0]
    first: Activation = t.activations[0]
    msgs = prompt_messages(t.activations, first)
    assert [m.role for m in msgs] == ["system", "user"]
    assert isinstance(msgs[0], ChatMessage) and msgs[1].content.startswith("Observation:")
    assert LLMPolicy(ScriptedModel(["{}"])).system == msgs[0].content
