"""Revisions applied to the task itself: sites, recomputed gold, labels, filter, export."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from stateguard.bench.faults import TurnFacts
from stateguard.bench.loaders import load_suite
from stateguard.train.dataset import DatasetCard, synth_dataset
from stateguard.train.evaluate import evaluate
from stateguard.train.export import ExportConfig
from stateguard.train.records import ManagerTrajectory, read_trajectories
from stateguard.train.revisions import REVISION_KINDS, revised_task, revision_sites
from stateguard.train.synth import SynthConfig

REV = Path(__file__).resolve().parent / "fixtures" / "mini_revisions"


@pytest.fixture(scope="module")
def revised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DatasetCard]:
    """The revision fixture suite with revisions only (stale reuse planted after them)."""
    out = tmp_path_factory.mktemp("revised")
    card = synth_dataset(
        SynthConfig(suite="dseval", path=REV, injectors=(), faults_per_task=1, cell_timeout=60),
        ExportConfig(lifecycle_share=0.25, val_fraction=0.0, split_seed=0),
        out,
    )
    return out, card


@pytest.fixture(scope="module")
def rtrajs(revised: tuple[Path, DatasetCard]) -> list[ManagerTrajectory]:
    return [t for t in read_trajectories(revised[0] / "trajectories.jsonl") if t.revision]


def _facts(code: str) -> TurnFacts:
    return TurnFacts(turn_id=2, code=code, ok=True, rerunnable=True)


@pytest.mark.parametrize(
    ("kind", "code", "expected"),
    [
        ("parameter", "rate = 0.1\n", "rate = 0.2\n"),
        ("parameter", "n = int((df['x'] > 5).sum())\n", "n = int((df['x'] > 6).sum())\n"),
        ("formula", "t = df['a'] * df['b']\n", "t = df['a'] / df['b']\n"),
        ("formula", "t = a - b\n", "t = a + b\n"),
        ("direction", "r = d.sort_values('t', ascending=False)\n", None),
        ("direction", "b = d[d['t'] > 10]\n", "b = d[d['t'] <= 10]\n"),
        ("filter", "b = d[d['t'] > 10]\n", "b = (d)\n"),
        ("filter", "b = d[d['r'].isin(['n', 's'])]\n", "b = d[d['r'].isin(['n'])]\n"),
    ],
)
def test_sites_change_exactly_the_element(kind: str, code: str, expected: str | None) -> None:
    sites = revision_sites(kind, _facts(code))
    got = [s.revised_code for s in sites]
    if expected is None:
        expected = "r = d.sort_values('t', ascending=True)\n"
    assert expected in got, got
    assert all(s.kind == kind and s.turn_id == 2 for s in sites)


def test_no_sites_in_unrerunnable_or_literal_free_code() -> None:
    assert revision_sites("parameter", TurnFacts(turn_id=2, code="x = 1\n", ok=True)) == []
    assert revision_sites("formula", _facts("x = len(df)\n")) == []
    assert revision_sites("direction", _facts("x = d['a'] == 'n'\n")) == []
    with pytest.raises(ValueError, match="not a revision kind"):
        revision_sites("rounding", _facts("x = 1\n"))


def test_revised_task_inserts_the_revision_turn_and_renumbers() -> None:
    task = next(t for t in load_suite("dseval", REV).tasks if t.task_id.endswith("orders"))
    site = revision_sites("parameter", _facts(task.turns[0].reference_code or ""))[0]
    site = site.model_copy(update={"turn_id": 1})
    rt = revised_task(task, site, 0)
    assert [t.turn_id for t in rt.turns] == list(range(1, len(task.turns) + 2))
    assert (rt.turns[1].reference_code or "").strip() == "rate = 0.2"
    assert rt.turns[1].validator == task.turns[0].validator
    assert rt.turns[2].reference_code == task.turns[1].reference_code
    assert rt.task_id != task.task_id


def test_every_revision_kind_is_planted_and_counted(
    revised: tuple[Path, DatasetCard], rtrajs: list[ManagerTrajectory]
) -> None:
    _, card = revised
    assert set(card.revisions) == set(REVISION_KINDS)
    by = Counter((t.revision.kind, t.kind) for t in rtrajs if t.revision)
    for kind in REVISION_KINDS:
        assert by[(kind, "clean")] >= 1, kind
        assert by[(kind, "counterfactual")] >= 1, kind
        assert by[(kind, "counterfactual")] == by[(kind, "repair")], kind
        n_cf = by[(kind, "counterfactual")]
        assert card.trajectories_by_revision[f"{kind}: counterfactual"] == n_cf
    assert {t.task_id for t in rtrajs} == {"dseval-01-orders", "dseval-03-stock"}
    assert len({t.id for t in rtrajs}) == len(rtrajs)


def test_no_effect_revision_is_filtered_and_counted(revised: tuple[Path, DatasetCard]) -> None:
    _, card = revised
    # 02-caps: cap = 100 -> 101 leaves "how many orders are under the cap" unchanged
    assert card.filtered["branch: revision had no effect on any later result"] == 1
    # 03-stock: `stock = stock.assign(qty=stock["qty"] * 2)` re-run doubles again
    assert (
        card.filtered["branch: revised turn not idempotent (a re-run changes later results)"] == 1
    )
    assert card.revisions_filtered == {"parameter": 1, "formula": 1}
    kept = sum(card.revisions.values())
    assert card.revision_filter_rate == pytest.approx(2 / (kept + 2), abs=1e-4)
    assert "revision had no effect on any later result" in (revised[0] / "card.md").read_text()


def test_an_idempotent_unrerunnable_turn_is_revised(rtrajs: list[ManagerTrajectory]) -> None:
    # 03-stock: `stock = stock.sort_values("qty", ascending=True)` rebinds stock from itself,
    # but re-running it changes nothing: its direction revision is kept
    # (turn 4 reads the item column of the re-sorted frame: reusing the frame as sorted
    # before the revision is a stale reuse, planted and repaired)
    got = [t for t in rtrajs if t.task_id == "dseval-03-stock" and t.revision]
    assert {(t.revision.kind, t.kind) for t in got if t.revision} == {
        ("direction", "clean"), ("direction", "counterfactual"), ("direction", "repair")
    }  # fmt: skip
    (clean,) = [t for t in got if t.kind == "clean"]
    assert clean.revision is not None and "ascending=False" in clean.revision.revised_code
    assert clean.revision.effect_turns == (4,)


def test_clean_revised_branch_commits_with_the_revision_relations(
    rtrajs: list[ManagerTrajectory],
) -> None:
    for t in (t for t in rtrajs if t.kind == "clean"):
        assert t.revision is not None
        k2 = t.revision.revision_turn
        assert min(a.turn for a in t.activations) == k2, "starts at the revision turn"
        assert "REPAIR" not in [a.label_kind for a in t.activations]
        fin = {a.turn: a for a in t.activations if a.label_kind == "FINALIZE_RELATIONS"}
        # the revision turn's state invalidates the revised turn's state
        assert "invalidate" in {r["type"] for r in fin[k2].label["relations"]}
        assert t.revision.effect_turns and all(e > k2 for e in t.revision.effect_turns)
        for e in t.revision.effect_turns:
            if e in fin:  # a later result the revision changed is recomputed and committed
                assert fin[e].label["relations"]
        outcome = {o.turn_id: o for o in t.turns}
        assert all(outcome[e].correct for e in t.revision.effect_turns if e in outcome)


def test_stale_reuse_of_the_pre_revision_value_is_repaired_then_committed(
    rtrajs: list[ManagerTrajectory],
) -> None:
    cfs = [t for t in rtrajs if t.kind == "counterfactual"]
    assert cfs
    for t in cfs:
        assert t.injector == "stale-reuse" and t.fault is not None and t.revision is not None
        assert t.fault.revision_turn == t.revision.revision_turn
        assert t.fault.turn_id > t.revision.revision_turn
        last = t.activations[-1]
        assert last.label_kind == "REPAIR" and last.turn == t.fault.turn_id
        assert "REPAIR" not in [a.label_kind for a in t.activations[:-1]]
        rep = next(r for r in rtrajs if r.kind == "repair" and r.branch_id == t.branch_id)
        assert [a.label_kind for a in rep.activations][-1] == "COMMIT_STATE"
        assert "REPAIR" not in [a.label_kind for a in rep.activations]
        assert rep.turns[-1].first_correct is False and rep.turns[-1].correct is True


def test_exported_rows_are_valid_chat_rows(revised: tuple[Path, DatasetCard]) -> None:
    out, card = revised
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert len(rows) == card.rows["train"] > 0
    for row in rows:
        msgs = row["messages"]
        assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "assistant"
        assert {m["role"] for m in msgs} <= {"system", "user", "assistant"}
        assert "kind" in json.loads(msgs[-1]["content"])
    qs = "\n".join(m["content"] for r in rows for m in r["messages"] if m["role"] == "user")
    assert "Revision of turn" in qs


def test_eval_replays_revised_branches_without_drift(
    revised: tuple[Path, DatasetCard], rtrajs: list[ManagerTrajectory]
) -> None:
    out, _ = revised
    report = evaluate(out, "deterministic", split="all")
    assert report.selected > 0 and report.drift == 0
    assert report.protocol_valid_rate == 1.0
    repairs = sum(1 for t in rtrajs for a in t.activations if a.label_kind == "REPAIR")
    assert repairs >= len(REVISION_KINDS)
