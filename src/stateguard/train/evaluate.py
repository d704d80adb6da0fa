"""The manager decision benchmark: held-out activations scored against the forced labels.

The held-out activations (the validation tasks of a dataset, or a seeded subset of
them) are replayed: each branch they come from runs again through the bench replay
path on the labelled path (teacher forcing, as in synthesis), and at each chosen
activation the policy under test is asked in the same view, with the same snapshot
(its tool actions run against it). Its action is scored, never applied.

* ``deterministic`` — `DeterministicPolicy` (it proposed the labels' basis: a sanity line);
* ``llm`` — the LLM policy's protocol (`stateguard.manager.policies.llm`): the
  conversation it has at that activation, the forced earlier actions as its replies,
  tool results appended, corrective retries on an invalid reply;
* ``none`` — no manager: it takes no action at any activation (scored as ``ABSTAIN``;
  nothing is replayed).

Scores: decision accuracy (the action's kind is a correct kind), repair precision and
recall (REPAIR predicted vs labelled), protocol-valid rate (every reply one valid
action and the final one a control action legal in that phase; not defined for none).
A view that differs from the recorded one (replay drift; object addresses in value
summaries aside) is not scored, and counted.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from stateguard.bench.gold import load_or_run_gold
from stateguard.bench.loaders import load_suite
from stateguard.errors import StateguardError
from stateguard.llm import ChatModel
from stateguard.manager import HarnessConfig
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.train.askers import Asker, LLMAsker, OutOfTime, deterministic_asker
from stateguard.train.branches import planned_fault, run_branch
from stateguard.train.dataset import read_card
from stateguard.train.records import Activation, ManagerTrajectory, read_trajectories
from stateguard.train.revisions import task_of

EvalPolicy = Literal["deterministic", "none", "llm"]
EVAL_POLICIES: tuple[str, ...] = ("deterministic", "none", "llm")


class Scored(BaseModel):
    """One held-out activation and what the policy under test did."""

    model_config = ConfigDict(frozen=True)

    trajectory_id: str
    index: int
    event: str
    label_kind: str
    label_kinds: tuple[str, ...]
    predicted: str | None = None
    valid: bool | None = None
    drift: bool = False
    asked: bool = True
    """False when the time budget ran out before this activation was reached."""

    @property
    def correct(self) -> bool:
        """The predicted kind is a correct kind."""
        return self.predicted in self.label_kinds


class EvalReport(BaseModel):
    """Scores of one policy on held-out activations."""

    model_config = ConfigDict(frozen=True)

    policy: str
    model: str | None = None
    split: str
    selected: int
    """Held-out activations chosen (after deduplication and ``--limit``)."""
    scored: int
    drift: int
    unasked: int = 0
    """Chosen activations not reached within ``--time-budget`` (not scored)."""
    decision_accuracy: float | None
    repair_precision: float | None
    repair_recall: float | None
    repairs_labelled: int
    repairs_predicted: int
    protocol_valid_rate: float | None
    llm_calls: int = 0
    seconds: float
    accuracy_by_label: dict[str, str]
    """``correct/n`` per labelled kind."""
    confusion: dict[str, dict[str, int]]
    """label kind -> predicted kind -> count."""


def _digest(a: Activation) -> str:
    payload = a.observation.model_dump_json() + "\n" + str(sorted(a.label.items()))
    return hashlib.sha256(payload.encode()).hexdigest()


def held_out(
    trajs: Sequence[ManagerTrajectory], tasks: set[str] | None, limit: int | None, seed: int
) -> list[tuple[ManagerTrajectory, Activation]]:
    """The held-out activations: of ``tasks`` (None: all), deduplicated; with ``limit``, a
    seeded subset of that size that keeps the labelled repairs (up to half of it)."""
    seen: set[str] = set()
    out = []
    for t in trajs:
        if tasks is not None and t.task_id not in tasks:
            continue
        for a in t.activations:
            d = _digest(a)
            if d not in seen:
                seen.add(d)
                out.append((t, a))
    if limit is not None and limit < len(out):
        # repairs are rare: the subset keeps them (up to half of it), the rest is drawn
        rng = random.Random(f"eval:{seed}")
        repairs = [x for x in out if x[1].label_kind == "REPAIR"]
        others = [x for x in out if x[1].label_kind != "REPAIR"]
        keep = rng.sample(repairs, min(len(repairs), limit // 2))
        out = keep + rng.sample(others, min(len(others), limit - len(keep)))
    return sorted(out, key=lambda x: (x[0].branch_id, x[1].index))


def _report(
    policy: str, split: str, rows: list[Scored], seconds: float, calls: int, model: str | None
) -> EvalReport:
    scored = [r for r in rows if r.asked and not r.drift]
    n = len(scored)
    pred_rep = [r for r in scored if r.predicted == "REPAIR"]
    lab_rep = [r for r in scored if r.label_kind == "REPAIR"]
    tp = sum(1 for r in pred_rep if r.label_kind == "REPAIR")
    by: dict[str, list[int]] = {}
    conf: dict[str, Counter[str]] = {}
    for r in scored:
        by.setdefault(r.label_kind, [0, 0])
        by[r.label_kind][0] += r.correct
        by[r.label_kind][1] += 1
        conf.setdefault(r.label_kind, Counter())[r.predicted or "none"] += 1
    valid = [r.valid for r in scored if r.valid is not None]
    return EvalReport(
        policy=policy,
        model=model,
        split=split,
        selected=len(rows),
        scored=n,
        drift=sum(1 for r in rows if r.asked and r.drift),
        unasked=sum(1 for r in rows if not r.asked),
        decision_accuracy=round(sum(r.correct for r in scored) / n, 4) if n else None,
        repair_precision=round(tp / len(pred_rep), 4) if pred_rep else None,
        repair_recall=round(tp / len(lab_rep), 4) if lab_rep else None,
        repairs_labelled=len(lab_rep),
        repairs_predicted=len(pred_rep),
        protocol_valid_rate=round(sum(valid) / len(valid), 4) if valid else None,
        llm_calls=calls,
        seconds=round(seconds, 1),
        accuracy_by_label={k: f"{c}/{m}" for k, (c, m) in sorted(by.items())},
        confusion={k: dict(sorted(v.items())) for k, v in sorted(conf.items())},
    )


def evaluate(
    data: Path,
    policy: EvalPolicy,
    *,
    model: ChatModel | None = None,
    split: Literal["validation", "train", "all"] = "validation",
    limit: int | None = None,
    seed: int = 0,
    max_tokens: int = 400,
    progress: Callable[[int, int], None] | None = None,
    time_budget: float | None = None,
) -> EvalReport:
    """Score ``policy`` on the held-out activations of the dataset in ``data``.

    With ``time_budget`` (seconds), no activation is asked after it is spent; those left
    are reported as unasked, not scored."""
    started = time.monotonic()
    if policy not in EVAL_POLICIES:
        choices = ", ".join(EVAL_POLICIES)
        raise StateguardError(f"unknown policy {policy!r}; choose one of {choices}")
    card = read_card(data)
    trajs = list(read_trajectories(data / "trajectories.jsonl"))
    if split == "validation":
        tasks: set[str] | None = set(card.validation_tasks)
        if not tasks:
            raise StateguardError(f"{data}: the dataset holds out no task (validation is empty)")
    elif split == "train":
        tasks = {t.task_id for t in trajs} - set(card.validation_tasks)
    else:
        tasks = None
    chosen = held_out(trajs, tasks, limit, seed)
    if policy == "none":
        rows = [_scored(t, a, predicted="ABSTAIN") for t, a in chosen]
        return _report(policy, split, rows, time.monotonic() - started, 0, None)
    config = HarnessConfig()
    deadline = None if time_budget is None else started + time_budget
    if policy == "llm":
        if model is None:
            raise StateguardError("--policy llm needs a chat model")
        asker: Asker = LLMAsker(model, config, max_tokens=max_tokens, deadline=deadline)
    else:
        asker = deterministic_asker(config)
    rows = _replay(data, card.synth, trajs, chosen, asker, progress, deadline)
    calls = asker.calls if isinstance(asker, LLMAsker) else 0
    name = getattr(model, "name", None) if model is not None else None
    return _report(policy, split, rows, time.monotonic() - started, calls, name)


class _Shadow:
    """Asks the policy under test at the chosen activations of one branch."""

    def __init__(
        self,
        items: list[tuple[ManagerTrajectory, Activation]],
        recorded: Sequence[Activation],
        asker: Asker,
        tick: Callable[[], None],
        deadline: float | None = None,
    ) -> None:
        self.deadline = deadline
        self.wanted = {a.index: (t, a) for t, a in items}
        self.recorded = recorded
        self.asker = asker
        self.tick = tick
        self.got: dict[int, Scored] = {}

    def __call__(
        self, index: int, obs: Observation, ctx: PolicyContext, live: Sequence[Activation]
    ) -> tuple[dict[str, Any] | None, bool | None]:
        if index not in self.wanted:
            return None, None
        t, a = self.wanted[index]
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.got[index] = _scored(t, a, asked=False)
            return None, None
        drift = _view(obs) != _view(a.observation)
        try:
            kind, valid = (None, None) if drift else self.asker(a, self.recorded, obs, ctx)
        except OutOfTime:
            self.got[index] = _scored(t, a, asked=False)
            return None, None
        self.got[index] = _scored(t, a, predicted=kind, valid=valid, drift=drift)
        self.tick()
        return ({"kind": kind} if kind else None), valid


_ADDRESS = re.compile(r"\b0x[0-9A-Fa-f]{6,}\b")


def _view(obs: Observation) -> str:
    """An observation for comparison: object addresses in value summaries differ per run."""
    return _ADDRESS.sub("0x…", obs.model_dump_json())


def _scored(t: ManagerTrajectory, a: Activation, **kw: Any) -> Scored:
    return Scored(
        trajectory_id=t.id,
        index=a.index,
        event=a.event,
        label_kind=a.label_kind,
        label_kinds=a.label_kinds,
        **kw,
    )


def _replay(
    data: Path,
    synth: Any,
    trajs: Sequence[ManagerTrajectory],
    chosen: list[tuple[ManagerTrajectory, Activation]],
    asker: Asker,
    progress: Callable[[int, int], None] | None,
    deadline: float | None = None,
) -> list[Scored]:
    loaded = load_suite(synth.suite, synth.path, path_maps=synth.path_maps)
    tasks = {t.task_id: t for t in loaded.tasks}
    by_branch: dict[str, list[tuple[ManagerTrajectory, Activation]]] = {}
    for t, a in chosen:
        by_branch.setdefault(t.branch_id, []).append((t, a))
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress:
            progress(done[0], len(chosen))

    rows: list[Scored] = []
    work = data / "work-eval"
    for branch, items in by_branch.items():
        first = items[0][0]
        task = tasks.get(first.task_id)
        if task is not None and first.revision is not None:
            task = task_of(task, first.revision)  # a revised task's branch
        if deadline is not None and time.monotonic() > deadline:
            rows += [_scored(t, a, asked=False) for t, a in items]
            continue
        if task is None:
            rows += [_scored(t, a, drift=True) for t, a in items]
            continue
        recorded = sorted(
            {a.index: a for t in trajs if t.branch_id == branch for a in t.activations}.values(),
            key=lambda a: a.index,
        )
        shadow = _Shadow(items, recorded, asker, tick, deadline)
        gold = load_or_run_gold(
            task, data / "cache" / "gold", work / f"{task.task_id}-gold", synth.cell_timeout
        )
        fault = planned_fault(first.fault) if first.fault is not None else None
        run_branch(
            task,
            gold,
            fault,
            work / task.task_id,
            cell_timeout=synth.cell_timeout,
            max_repairs=synth.max_repairs,
            shadow=shadow,
            until_turn=max(a.turn for _, a in items),
        )
        rows += [shadow.got.get(a.index) or _scored(t, a, drift=True) for t, a in items]
    return rows
