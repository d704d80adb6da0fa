"""Metrics over per-turn records, with hand-computed expectations."""

from __future__ import annotations

import pytest

from stateguard.bench.metrics import (
    METRIC_KEYS,
    TurnRecord,
    compute_metrics,
    dependency_conditioned_error,
)


def rec(
    task: str, turn: int, n: int, correct: bool | None, deps: tuple[int, ...] = (), **kw
) -> TurnRecord:
    return TurnRecord(task_id=task, turn_id=turn, n_turns=n, correct=correct, depends_on=deps, **kw)


def test_keys_are_stable_and_empty_run_is_none() -> None:
    metrics = compute_metrics([])
    assert tuple(metrics) == METRIC_KEYS
    for key in (
        "turn_accuracy",
        "task_macro_accuracy",
        "dcr",
        "fault_recall",
        "false_alarm_rate",
        "llm_calls_per_turn",
        "repair_fix_rate",
    ):
        assert metrics[key] is None
    assert metrics["turns_total"] == 0 and metrics["per_domain"] == {}
    assert metrics["by_position"] == {"first": None, "last": None, "first_n": 0, "last_n": 0}


def test_accuracies_micro_macro_domain() -> None:
    records = [
        rec("A", 1, 3, True, domain="sales"),
        rec("A", 2, 3, True, domain="sales"),
        rec("A", 3, 3, False, domain="sales"),
        rec("B", 1, 1, False, domain="health"),
        rec("C", 1, 2, None, domain="health"),  # not judged
        rec("C", 2, 2, True, domain="health", skipped=True),
    ]
    m = compute_metrics(records)
    assert m["turn_accuracy"] == pytest.approx(2 / 4)
    assert m["task_macro_accuracy"] == pytest.approx((2 / 3 + 0) / 2)
    assert m["turns_total"] == 6 and m["turns_scored"] == 4 and m["turns_skipped"] == 1
    assert m["tasks_total"] == 3
    assert m["per_domain"]["sales"]["turn_accuracy"] == pytest.approx(2 / 3)
    assert m["per_domain"]["health"] == {
        "turn_accuracy": 0.0,
        "task_macro_accuracy": 0.0,
        "turns_scored": 1,
    }
    assert compute_metrics([rec("X", 1, 1, True)])["per_domain"] == {
        "unknown": {"turn_accuracy": 1.0, "task_macro_accuracy": 1.0, "turns_scored": 1}
    }


def test_by_position() -> None:
    # 11 turns: positions 0, .1, ..., 1 -> turns 1-2 first, 10-11 last
    long_task = [rec("L", t, 11, t <= 2) for t in range(1, 12)]
    two = [rec("T", 1, 2, False), rec("T", 2, 2, True)]
    single = [rec("S", 1, 1, True)]  # no position
    m = compute_metrics(long_task + two + single)
    assert m["by_position"]["first_n"] == 3 and m["by_position"]["last_n"] == 3
    assert m["by_position"]["first"] == pytest.approx(2 / 3)
    assert m["by_position"]["last"] == pytest.approx(1 / 3)


def test_dcr_hand_computed() -> None:
    records = [
        rec("A", 1, 4, False),
        rec("A", 2, 4, True),
        rec("A", 3, 4, False, (1,)),  # dep wrong, turn wrong
        rec("A", 4, 4, True, (1, 2)),  # some dep wrong, turn right
        rec("B", 1, 3, True),
        rec("B", 2, 3, True, (1,)),  # deps right, turn right
        rec("B", 3, 3, False, (1, 2)),  # deps right, turn wrong
        rec("C", 1, 2, True),
        rec("C", 2, 2, True, (1,)),  # deps right, turn right
    ]
    detail = dependency_conditioned_error(records)
    assert detail["n_dep_wrong"] == 2 and detail["n_deps_right"] == 3
    assert detail["p_wrong_given_dep_wrong"] == pytest.approx(1 / 2)
    assert detail["p_wrong_given_deps_right"] == pytest.approx(1 / 3)
    assert compute_metrics(records)["dcr"] == pytest.approx(1 / 2 - 1 / 3)


def test_dcr_only_observed_dependencies_count() -> None:
    records = [
        rec("A", 1, 3, None),  # not judged -> unobserved
        rec("A", 2, 3, False),
        rec("A", 3, 3, True, (1, 2)),  # observed deps: {2: wrong}
        rec("B", 1, 2, True, skipped=True),
        rec("B", 2, 2, False, (1,)),  # only dependency skipped -> left out
        rec("C", 1, 2, True),
        rec("C", 2, 2, False, (1,)),
    ]
    detail = dependency_conditioned_error(records)
    assert detail["n_dep_wrong"] == 1 and detail["n_deps_right"] == 1
    assert detail["value"] == pytest.approx(0.0 - 1.0)


@pytest.mark.parametrize(
    "records",
    [
        [],  # nothing at all
        [rec("A", 1, 2, True), rec("A", 2, 2, False)],  # no dependencies anywhere
        [rec("A", 1, 2, True), rec("A", 2, 2, False, (1,))],  # no wrong-dependency group
        [rec("A", 1, 2, False), rec("A", 2, 2, False, (1,))],  # no right-dependency group
        [rec("A", 1, 2, None), rec("A", 2, 2, False, (1,))],  # dependency unobserved
        [rec("A", 1, 2, True), rec("A", 2, 2, None, (1,))],  # dependent turn unjudged
    ],
    ids=["empty", "no_deps", "no_wrong_group", "no_right_group", "dep_unobserved", "turn_unjudged"],
)
def test_dcr_undefined(records: list[TurnRecord]) -> None:
    assert compute_metrics(records)["dcr"] is None


def test_faults_repairs_calls() -> None:
    records = [
        rec("A", 1, 4, True, injected=True, flagged=True, llm_calls=2),
        rec("A", 2, 4, False, injected=True, flagged=False, llm_calls=1),
        rec("A", 3, 4, True, flagged=True, repaired=True, fixed_by_repair=True, llm_calls=3),
        rec("A", 4, 4, False, repaired=True, llm_calls=0),
        rec("B", 1, 2, False, flagged=False),
        rec("B", 2, 2, True, skipped=True, injected=True, flagged=True, llm_calls=100),
    ]
    m = compute_metrics(records)
    assert m["fault_recall"] == pytest.approx(1 / 2)
    assert m["false_alarm_rate"] == pytest.approx(1 / 3)
    assert m["repairs_fixed"] == 1 and m["repairs_attempted"] == 2
    assert m["repair_fix_rate"] == pytest.approx(1 / 2)
    assert m["llm_calls_per_turn"] == pytest.approx(6 / 5)


def test_false_alarms_on_clean_turns_that_joined() -> None:
    records = [
        rec("A", 1, 4, True, joins=2, flagged=True),
        rec("A", 2, 4, True, joins=1),
        rec("A", 3, 4, True, joins=1, injected=True, flagged=True),  # a fault: not clean
        rec("A", 4, 4, True, flagged=True),  # no join
    ]
    m = compute_metrics(records)
    assert m["clean_join_turns"] == 2 and m["join_false_alarm_rate"] == pytest.approx(1 / 2)
    assert m["false_alarm_rate"] == pytest.approx(2 / 3)
    assert compute_metrics([rec("A", 1, 1, True)])["join_false_alarm_rate"] is None


def test_no_injection_means_no_recall() -> None:
    m = compute_metrics([rec("A", 1, 1, True)])
    assert m["fault_recall"] is None and m["false_alarm_rate"] == 0.0
