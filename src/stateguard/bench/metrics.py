"""Benchmark metrics over per-turn records.

Definitions (``scored`` turns are those not skipped and with ``correct`` not None):

- ``turn_accuracy``: micro mean of ``correct`` over scored turns.
- ``task_macro_accuracy``: mean over tasks (with ≥ 1 scored turn) of their turn accuracy.
- ``per_domain``: both accuracies per domain (domain None is reported as ``"unknown"``).
- ``by_position``: turn accuracy of the first and last 10 % of a task. Turn ids are 1-based
  ordinals, ``position = (turn_id - 1) / (n_turns - 1)``; first means position ≤ 0.1,
  last means ≥ 0.9. Tasks with fewer than 2 turns have no position and are left out;
  in a 2-turn task turn 1 is first and turn 2 last.
- ``dcr`` (dependency-conditioned error rate): among scored turns that have at least one
  *observed* dependency (a scored turn of the same task listed in ``depends_on``),
  P(turn wrong | some observed dependency wrong) − P(turn wrong | all observed
  dependencies right). Turns without dependencies, or whose dependencies were all
  unscored, are left out; None when either group is empty.
- ``fault_recall``: flagged / injected over non-skipped injected turns (None if none);
  ``false_alarm_rate``: flagged / clean over non-skipped clean turns (None if none);
  ``join_false_alarm_rate``: the same over the clean turns that merged or joined tables
  (``joins`` > 0: calls the join guard recorded in the turn's first attempt; concat is
  not counted), ``clean_join_turns`` their number.
- ``repairs_fixed``: turns whose repair fixed them; ``repair_fix_rate`` = that / repaired.
- ``llm_calls_per_turn``: LLM calls / non-skipped turns.

Every key of `METRIC_KEYS` is always present; a value is None where it is undefined.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

FIRST_POSITION = 0.1
LAST_POSITION = 0.9
UNKNOWN_DOMAIN = "unknown"

METRIC_KEYS = (
    "turn_accuracy",
    "task_macro_accuracy",
    "dcr",
    "dcr_detail",
    "fault_recall",
    "false_alarm_rate",
    "join_false_alarm_rate",
    "clean_join_turns",
    "repairs_fixed",
    "repairs_attempted",
    "repair_fix_rate",
    "llm_calls_per_turn",
    "turns_total",
    "turns_scored",
    "turns_skipped",
    "tasks_total",
    "per_domain",
    "by_position",
)


class TurnRecord(BaseModel):
    """What happened on one turn of one run: the unit every metric is computed from."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    turn_id: int = Field(ge=1)
    n_turns: int = Field(ge=1)
    domain: str | None = None
    correct: bool | None = None
    """None when the turn was not judged (judge excluded it)."""
    depends_on: tuple[int, ...] = ()
    injected: bool = False
    flagged: bool = False
    repaired: bool = False
    fixed_by_repair: bool = False
    llm_calls: int = Field(default=0, ge=0)
    skipped: bool = False
    joins: int = Field(default=0, ge=0)
    """Merge/join calls the join guard recorded in the turn's first attempt (0: none, or
    a run without the guard)."""

    @property
    def scored(self) -> bool:
        """True when the turn counts towards accuracy metrics."""
        return not self.skipped and self.correct is not None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def turn_accuracy(records: Iterable[TurnRecord]) -> float | None:
    """Micro accuracy over scored turns."""
    return _mean([float(bool(r.correct)) for r in records if r.scored])


def task_macro_accuracy(records: Iterable[TurnRecord]) -> float | None:
    """Mean over tasks of each task's turn accuracy (tasks without scored turns left out)."""
    per_task: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.scored:
            per_task[r.task_id].append(float(bool(r.correct)))
    return _mean([sum(v) / len(v) for v in per_task.values()])


def position(record: TurnRecord) -> float | None:
    """Normalized position of a turn in its task, None for single-turn tasks."""
    if record.n_turns < 2:
        return None
    return min(max((record.turn_id - 1) / (record.n_turns - 1), 0.0), 1.0)


def by_position(records: Iterable[TurnRecord]) -> dict[str, Any]:
    """Accuracy of the first and last 10 % of tasks' turns, with the counts used."""
    first: list[float] = []
    last: list[float] = []
    for r in records:
        pos = position(r)
        if not r.scored or pos is None:
            continue
        if pos <= FIRST_POSITION:
            first.append(float(bool(r.correct)))
        if pos >= LAST_POSITION:
            last.append(float(bool(r.correct)))
    return {"first": _mean(first), "last": _mean(last), "first_n": len(first), "last_n": len(last)}


def dependency_conditioned_error(records: Iterable[TurnRecord]) -> dict[str, Any]:
    """DCR and its two conditional error rates (see the module docstring)."""
    records = list(records)
    outcome = {(r.task_id, r.turn_id): bool(r.correct) for r in records if r.scored}
    wrong_dep: list[float] = []
    right_dep: list[float] = []
    for r in records:
        if not r.scored or not r.depends_on:
            continue
        observed = [outcome[(r.task_id, d)] for d in r.depends_on if (r.task_id, d) in outcome]
        if not observed:
            continue
        (right_dep if all(observed) else wrong_dep).append(float(not r.correct))
    p_wrong_bad = _mean(wrong_dep)
    p_wrong_good = _mean(right_dep)
    value = None
    if p_wrong_bad is not None and p_wrong_good is not None:
        value = p_wrong_bad - p_wrong_good
    return {
        "value": value,
        "p_wrong_given_dep_wrong": p_wrong_bad,
        "p_wrong_given_deps_right": p_wrong_good,
        "n_dep_wrong": len(wrong_dep),
        "n_deps_right": len(right_dep),
    }


def _per_domain(records: Sequence[TurnRecord]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[TurnRecord]] = defaultdict(list)
    for r in records:
        groups[r.domain if r.domain is not None else UNKNOWN_DOMAIN].append(r)
    return {
        domain: {
            "turn_accuracy": turn_accuracy(group),
            "task_macro_accuracy": task_macro_accuracy(group),
            "turns_scored": sum(1 for r in group if r.scored),
        }
        for domain, group in sorted(groups.items())
    }


def compute_metrics(records: Iterable[TurnRecord]) -> dict[str, Any]:
    """All benchmark metrics of one run; keys are `METRIC_KEYS`, None where undefined."""
    records = list(records)
    active = [r for r in records if not r.skipped]
    injected = [r for r in active if r.injected]
    clean = [r for r in active if not r.injected]
    joined = [r for r in clean if r.joins]
    repaired = [r for r in active if r.repaired]
    dcr = dependency_conditioned_error(records)
    metrics: dict[str, Any] = {
        "turn_accuracy": turn_accuracy(records),
        "task_macro_accuracy": task_macro_accuracy(records),
        "dcr": dcr["value"],
        "dcr_detail": dcr,
        "fault_recall": _rate(sum(r.flagged for r in injected), len(injected)),
        "false_alarm_rate": _rate(sum(r.flagged for r in clean), len(clean)),
        "join_false_alarm_rate": _rate(sum(r.flagged for r in joined), len(joined)),
        "clean_join_turns": len(joined),
        "repairs_fixed": sum(1 for r in active if r.fixed_by_repair),
        "repairs_attempted": len(repaired),
        "repair_fix_rate": _rate(sum(r.fixed_by_repair for r in repaired), len(repaired)),
        "llm_calls_per_turn": _rate(sum(r.llm_calls for r in active), len(active)),
        "turns_total": len(records),
        "turns_scored": sum(1 for r in records if r.scored),
        "turns_skipped": sum(1 for r in records if r.skipped),
        "tasks_total": len({r.task_id for r in records}),
        "per_domain": _per_domain(records),
        "by_position": by_position(records),
    }
    return metrics
