"""Synthesis: branches replayed with the deterministic manager, labels forced from the faults."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.bench.loaders import load_suite
from stateguard.bench.records import TurnResult
from stateguard.cli.main import app
from stateguard.manager.policies.base import Observation
from stateguard.train.branches import BranchRun
from stateguard.train.dataset import DatasetCard, synth_dataset
from stateguard.train.export import ExportConfig
from stateguard.train.records import Activation, FaultInfo, ManagerTrajectory, read_trajectories
from stateguard.train.synth import INJECTORS, SynthConfig, fault_trajectories

MINI = Path(__file__).resolve().parent / "fixtures" / "mini_dseval"


def _kinds(t: ManagerTrajectory) -> list[str]:
    return [a.label_kind for a in t.activations]


def test_every_injector_plants_a_kept_branch(mini_trajectories: list[ManagerTrajectory]) -> None:
    by_kind = Counter((t.kind, t.injector) for t in mini_trajectories)
    for injector in INJECTORS:
        assert by_kind[("counterfactual", injector)] >= 1, injector
        assert by_kind[("repair", injector)] == by_kind[("counterfactual", injector)]
    assert by_kind[("clean", None)] == 2


def test_counterfactual_ends_in_repair_at_the_planted_turn(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    for t in (t for t in mini_trajectories if t.kind == "counterfactual"):
        assert t.fault is not None
        last = t.activations[-1]
        assert last.label_kind == "REPAIR" and last.label_reason == "fault-repair"
        assert last.turn == t.fault.turn_id and last.faulted and last.event == "review"
        assert "REPAIR" not in _kinds(t)[:-1]
        assert last.result is not None and last.result.startswith("repair 1")
        # the view shows the faulty code, which is what the label's evidence points at
        heads = [line for s in last.observation.pending_steps for line in s["code_head"]]
        assert any(line.strip() in t.fault.faulty_code for line in heads if line.strip())


def test_after_the_repair_the_turn_commits_without_repairing_again(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    for t in (t for t in mini_trajectories if t.kind == "repair"):
        assert t.fault is not None
        assert _kinds(t) == ["UPDATE_STATE", "FINALIZE_RELATIONS", "COMMIT_STATE"]
        assert all(
            a.after_repair and a.attempt == 2 and a.turn == t.fault.turn_id for a in t.activations
        )
        assert t.activations[-1].result and t.activations[-1].result.startswith("committed ")
        final = t.turns[-1]
        assert final.first_correct is False and final.correct is True and final.fixed_by_repair


def test_clean_turns_open_update_finalize_commit(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    for t in (t for t in mini_trajectories if t.kind == "clean"):
        by_turn: dict[int, list[Activation]] = {}
        for a in t.activations:
            by_turn.setdefault(a.turn, []).append(a)
        for acts in by_turn.values():
            assert [a.label_kind for a in acts] == [
                "OPEN_STATE",
                "UPDATE_STATE",
                "FINALIZE_RELATIONS",
                "COMMIT_STATE",
            ]
            assert acts[2].label["relations"], "a finalized state names its relations"
            assert acts[-1].result and acts[-1].result.startswith("committed ")


def test_the_revision_turn_is_related_to_the_state_it_revises(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    """``sales = sales.assign(price=...)`` rewrites one column of the frame turn 1 made: it
    builds on that state (progress) and, as a rewrite of a column the earlier state only
    loaded, invalidates none of its conclusions (``stateguard.manager.binding``)."""
    clean = next(t for t in mini_trajectories if t.kind == "clean" and t.task_id.endswith("sales"))
    finalize = [a for a in clean.activations if a.label_kind == "FINALIZE_RELATIONS"]
    assert [r["type"] for r in finalize[0].label["relations"]] == ["init"]
    rels = finalize[1].label["relations"]
    assert [r["type"] for r in rels] == ["progress"]
    assert rels[0]["related_state_id"] == finalize[0].state_id


def test_stale_reuse_label_is_the_lineage_finding(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    t = next(
        t for t in mini_trajectories if t.kind == "counterfactual" and t.injector == "stale-reuse"
    )
    last = t.activations[-1]
    assert last.proposed and last.proposed["kind"] == "REPAIR"  # lineage proves it
    assert any(e.check == "stale_use" for e in last.evidence)
    assert last.label == last.proposed


def test_semantic_fault_label_localizes_without_giving_the_solution(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    for t in mini_trajectories:
        if t.kind != "counterfactual" or t.injector in ("stale-reuse", "join-fault"):
            continue
        assert t.fault is not None and t.fault.node is not None
        last = t.activations[-1]
        # the deterministic checks cannot see these: the label comes from the known fault
        assert last.proposed and last.proposed["kind"] != "REPAIR"
        text = " ".join(last.label["analytical_evidence"])
        assert f"line {t.fault.node['line']}" in text
        assert str(t.fault.node["original"]) not in text  # no correct code in a repair


def test_card_counts_the_filtered_branches(mini_dataset: tuple[Path, DatasetCard]) -> None:
    _, card = mini_dataset
    # 02-scores turn 1 rounds an integer sum: dropping the rounding changes nothing
    assert card.filtered.get("branch: fault had no effect (dry run)", 0) >= 1
    n_filtered = sum(card.filtered_by_injector.values())
    planned = card.trajectories["repair"] + n_filtered
    assert card.filter_rate == pytest.approx(n_filtered / planned, abs=1e-4)


def _fake_run(first_correct: bool | None, correct: bool | None, attempts: int) -> BranchRun:
    obs = Observation(event="review", turn=2, question="q")
    acts = (
        Activation(
            index=0,
            event="review",
            turn=2,
            observation=obs,
            label={"kind": "REPAIR", "analytical_evidence": ["x"]},
            label_kinds=("REPAIR",),
            label_reason="fault-repair",
            result="repair 1 (light)",
        ),
        Activation(
            index=1,
            event="review",
            turn=2,
            attempt=2,
            observation=obs,
            label={"kind": "COMMIT_STATE"},
            label_kinds=("COMMIT_STATE",),
            label_reason="post-repair-commit",
            result="committed S2",
        ),
    )
    result = TurnResult(
        task_id="t",
        turn_id=2,
        n_turns=2,
        first_correct=first_correct,
        correct=correct,
        attempts=attempts,
    )
    return BranchRun(activations=acts, results=(result,))


@pytest.mark.parametrize(
    ("first", "final", "attempts", "reason"),
    [
        (True, True, 1, "fault had no effect (replay)"),
        (None, None, 1, "faulted turn not judged"),
        (False, False, 2, "repair did not fix the turn"),
        (False, True, 2, None),
    ],
)
def test_branch_filter_reasons(first, final, attempts, reason) -> None:
    task = load_suite("dseval", MINI).tasks[0]
    info = FaultInfo(
        kind="flipped-comparison", turn_id=2, ident="i", description="d", faulty_code="x"
    )
    got, why = fault_trajectories(task, info, 0, _fake_run(first, final, attempts))
    if reason is None:
        assert why is None and [t.kind for t in got] == ["counterfactual", "repair"]
    else:
        assert got == [] and why is not None and why.reason == reason


@pytest.mark.timeout(600)
def test_shared_dseval_session(dseval_root: Path, tmp_path: Path) -> None:
    """One DSEval exercise session (02-filtering-sorting-euro12), flipped comparisons only."""
    names = [t.task_id for t in load_suite("dseval", dseval_root).tasks]
    start = names.index("dseval-02-filtering-sorting-euro12")
    card = synth_dataset(
        SynthConfig(
            suite="dseval",
            path=dseval_root,
            injectors=("flipped-comparison",),
            faults_per_task=1,
            start_index=start,
            limit=1,
            cell_timeout=60,
        ),
        ExportConfig(val_fraction=0.0),
        tmp_path,
    )
    trajs = list(read_trajectories(tmp_path / "trajectories.jsonl"))
    assert card.tasks == 1 and {t.task_id for t in trajs} == {names[start]}
    clean = [t for t in trajs if t.kind == "clean"]
    assert len(clean) == 1 and "REPAIR" not in _kinds(clean[0])
    cf = [t for t in trajs if t.kind == "counterfactual"]
    assert len(cf) == 1 and cf[0].injector == "flipped-comparison"
    assert _kinds(cf[0])[-1] == "REPAIR" and cf[0].activations[-1].turn == cf[0].fault.turn_id
    (repair,) = [t for t in trajs if t.kind == "repair"]
    assert _kinds(repair)[-1] == "COMMIT_STATE" and repair.turns[-1].fixed_by_repair


def test_cli_synth_writes_rows_and_card(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "synth",
            "--suite",
            "dseval",
            "--path",
            str(MINI),
            "--out",
            str(out),
            "--inject",
            "scope-change",
            "--faults-per-task",
            "1",
            "--limit",
            "1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    card = DatasetCard.model_validate_json(result.stdout)
    assert card.synth.injectors == ("scope-change",) and card.tasks == 1
    assert card.trajectories == {"clean": 1, "counterfactual": 1, "repair": 1}
    rows = (out / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == card.rows["train"] > 0
    assert (out / "card.md").read_text(encoding="utf-8").startswith("# Manager dataset: dseval")


def test_cli_synth_names_an_unknown_injector(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "train",
            "synth",
            "--suite",
            "dseval",
            "--path",
            str(MINI),
            "--out",
            str(tmp_path),
            "--inject",
            "stale-reuse,typo-fault",
        ],
    )
    assert result.exit_code == 2
    assert "typo-fault" in result.output and "join-fault" in result.output
    assert not (tmp_path / "card.json").exists()
