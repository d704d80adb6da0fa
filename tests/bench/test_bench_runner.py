"""The replay runner on real kernels: ceiling, skipped turns, lineage dependencies, faults."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_bench_runner_support import read_turns, real_dseval_suite, tiny_dseval_suite

from stateguard.bench.metrics import compute_metrics
from stateguard.bench.records import RunConfig, RunStore
from stateguard.bench.runner import run_benchmark

pytestmark = pytest.mark.kernel


def _run(path: Path, out: Path, suite: str = "dseval", **kw) -> dict[int, dict]:
    run_benchmark(RunConfig(suite=suite, path=str(path), **kw), out)
    turns = read_turns(out)
    assert len({(t["task_id"], t["turn_id"]) for t in turns}) == len(turns)  # no duplicates
    return {t["turn_id"]: t for t in turns}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return tiny_dseval_suite(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def gold_cache(tiny, tmp_path_factory) -> Path:
    """A clean replay of the tiny suite; its gold cache is reused by later runs."""
    out = tmp_path_factory.mktemp("clean") / "run"
    _run(tiny, out)
    return out


def _with_gold(gold_cache: Path, out: Path) -> Path:
    out.mkdir(parents=True)
    shutil.copytree(gold_cache / "gold", out / "gold")
    return out


def test_replay_ceiling_skips_failing_reference_and_records_lineage_dependencies(
    gold_cache,
) -> None:
    turns = {t["turn_id"]: t for t in read_turns(gold_cache)}
    assert [turns[i]["correct"] for i in range(1, 6)] == [True] * 5
    assert turns[6]["skipped"] and turns[6]["correct"] is None
    assert "AttributeError" in turns[6]["skipped_reason"]
    assert turns[2]["depends_on"] == [1]
    # reads the revised price column (turn 2) and the qty column created at turn 1
    assert turns[3]["depends_on"] == [1, 2]
    # groups by region (turn 1) and averages the revised price column (turn 2)
    assert turns[5]["depends_on"] == [1, 2]
    assert not any(t["flagged"] or t["injected"] for t in turns.values())
    m = compute_metrics(RunStore(gold_cache).records())
    assert m["turn_accuracy"] == 1.0 and m["turns_skipped"] == 1 and m["turns_total"] == 6


def test_real_dseval_session_replays_correctly(dseval_root, tmp_path) -> None:
    suite = real_dseval_suite(tmp_path / "suite", dseval_root, "02-filtering-sorting-chipotle")
    turns = _run(suite, tmp_path / "run")
    assert len(turns) == 7
    assert all(t["correct"] is True and not t["skipped"] for t in turns.values())
    # item_price cleaned at turn 2; item_name and quantity as loaded at turn 1
    assert turns[3]["depends_on"] == [1, 2]


def test_stale_reuse_without_manager_goes_unnoticed(tiny, gold_cache, tmp_path) -> None:
    out = _with_gold(gold_cache, tmp_path / "none")
    turns = _run(tiny, out, inject="stale-reuse", manager="none")
    (inj,) = RunStore(out).injections()
    assert (inj.turn_id, inj.variable, inj.alias) == (3, "orders", "orders_orig")
    # turn 3 reads the price column revised at turn 2 (and qty, unchanged since turn 1)
    assert (inj.pre_version, inj.read_version, inj.revision_turn) == (
        "orders@v1",
        "orders['price']@v2",
        2,
    )
    assert inj.predicted_outcome == "silent" and inj.fault_effective is True
    assert "orders_orig" in inj.faulty_code
    t3 = turns[3]
    assert t3["injected"] and t3["correct"] is False and not t3["flagged"]
    assert [t["injected"] for t in turns.values()].count(True) == 1


def test_deterministic_manager_catches_and_repairs_stale_reuse(tiny, gold_cache, tmp_path) -> None:
    out = _with_gold(gold_cache, tmp_path / "det")
    turns = _run(tiny, out, inject="stale-reuse", manager="deterministic")
    t3 = turns[3]
    assert t3["injected"] and t3["flagged"] and t3["repaired"]
    assert t3["first_correct"] is False and t3["correct"] is True and t3["fixed_by_repair"]
    clean = [t for i, t in turns.items() if i != 3 and not t["skipped"]]
    assert clean and not any(t["flagged"] for t in clean)
    assert all(t["correct"] for t in clean)
    m = compute_metrics(RunStore(out).records())
    assert m["fault_recall"] == 1.0 and m["false_alarm_rate"] == 0.0
    assert m["llm_calls_per_turn"] == 0.0 and m["repairs_fixed"] == 1
    events = (out / "manager" / "dseval-01-tiny-orders" / "manager_events.jsonl").read_text()
    assert "orders_orig@v1" in events


@pytest.mark.parametrize("kind", ["flipped-comparison", "scope-change", "dropped-constraint"])
def test_ast_injection_end_to_end(kind, tiny, gold_cache, tmp_path) -> None:
    out = _with_gold(gold_cache, tmp_path / kind)
    turns = _run(tiny, out, inject=kind, seed=7)
    (inj,) = RunStore(out).injections()
    assert inj.kind == kind and inj.turn_id in (3, 4, 5) and inj.node is not None
    assert inj.node["original"] in (tiny / "01-tiny-orders.py").read_text()
    t = turns[inj.turn_id]
    assert t["injected"] and t["injection_kind"] == kind
    assert t["fault_effective"] is (t["first_correct"] is False)
    if inj.predicted_outcome == "silent":
        assert t["correct"] is False  # no manager: the planted fault stands
    log = [json.loads(x) for x in (out / "injections.jsonl").read_text().splitlines()]
    assert log[0]["faulty_code"] != log[0]["node"]["original"]


def test_longds_fixture_replays_with_comment_dependencies(longds_toy, tmp_path) -> None:
    turns = _run(longds_toy, tmp_path / "run", suite="longds", manager="deterministic")
    assert all(t["correct"] is True for t in turns.values())
    assert turns[5]["depends_on"] == [2, 4]
    assert not any(t["flagged"] for t in turns.values())


def test_clean_merge_turns_are_counted_and_their_false_alarms_apart(dseval_root, tmp_path) -> None:
    suite = real_dseval_suite(tmp_path / "suite", dseval_root, "05-merge-fictitous-names")
    turns = _run(suite, tmp_path / "run", manager="deterministic")
    # turns 2-3 concatenate (not a merge); 4-6 merge on subject_id
    assert [turns[i]["joins"] for i in range(1, 7)] == [0, 0, 0, 1, 1, 1]
    m = compute_metrics(RunStore(tmp_path / "run").records())
    assert m["clean_join_turns"] == 3
    # turn 4, `pd.merge(all_data, data3, on='subject_id')`: no how=, and pandas' default
    # inner join drops rows on both sides; its question ("Merge all_data and data3 along
    # the subject_id value") asks for no rows to be kept, so the loss is a note
    assert [i for i, t in turns.items() if t["flagged"]] == []
    assert m["join_false_alarm_rate"] == 0.0 and m["false_alarm_rate"] == 0.0
    # the same code under a question that asks to keep unmatched rows: an alarm, counted
    session = suite / "05-merge-fictitous-names.py"
    text = session.read_text(encoding="utf-8")
    asked = "Merge all_data and data3 along the subject_id value, keeping unmatched rows"
    session.write_text(text.replace("Merge all_data and data3 along the subject_id value", asked))
    turns = _run(suite, tmp_path / "run2", manager="deterministic")
    m = compute_metrics(RunStore(tmp_path / "run2").records())
    assert [i for i, t in turns.items() if t["flagged"]] == [4]
    assert m["join_false_alarm_rate"] == pytest.approx(1 / 3)
    assert m["false_alarm_rate"] == pytest.approx(1 / 6)


def test_a_join_fault_in_a_turn_that_rebinds_its_input_is_redone_from_a_checkpoint(
    dseval_root, tmp_path
) -> None:
    # turn 3: `pokemon_col = pokemon_col.merge(pokemon_place, on='name')` rebinds
    # pokemon_col from itself; re-running it on the faulty state would merge twice
    suite = real_dseval_suite(
        tmp_path / "suite", dseval_root, "08-creating-series-and-dataframes-pokemon"
    )
    turns = _run(suite, tmp_path / "run", inject="join-fault", manager="deterministic")
    (inj,) = RunStore(tmp_path / "run").injections()
    assert inj.turn_id == 3 and inj.kind == "join-fault"
    t3 = turns[3]
    assert t3["injected"] and t3["flagged"] and t3["repaired"]
    assert t3["first_correct"] is False and t3["correct"] is True  # the redo was clean
    assert turns[4]["correct"] is True  # and so is the turn after it
