"""One branch: a task replayed through the bench replay path with a recording manager.

A branch is the clean replay of a task, or its replay with one planted fault up to
the end of the faulted turn. The worker is the bench's `ReplayWorker` (reference code;
after a repair hint it re-runs the turn's reference code); the manager is the real
deterministic harness over the real kernel, its policy wrapped in a `RecordingPolicy`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stateguard.bench import inject
from stateguard.bench.gold import GoldTask, PlannedFault
from stateguard.bench.observe import task_kernel
from stateguard.bench.records import TurnResult
from stateguard.bench.replay import ReplayWorker
from stateguard.bench.tasks import BenchTask
from stateguard.guard import GuardedSession
from stateguard.guard.sinks import EventList
from stateguard.manager import HarnessConfig
from stateguard.train.recorder import RecordingPolicy, Shadow, with_results
from stateguard.train.records import Activation, FaultInfo


class BranchRun(BaseModel):
    """What replaying one branch gave: the recorded activations and the turns' results."""

    model_config = ConfigDict(frozen=True)

    activations: tuple[Activation, ...]
    results: tuple[TurnResult, ...]


def fault_info(task: BenchTask, planned: PlannedFault) -> FaultInfo:
    """The record of a planned fault."""
    c = planned.candidate
    ref = task.turns[c.turn_id - 1].reference_code or ""
    return FaultInfo(
        kind=c.kind,
        turn_id=c.turn_id,
        ident=c.ident,
        description=c.description,
        faulty_code=c.faulty_code,
        reference_code=ref,
        variable=c.variable,
        alias=c.alias,
        read_version=c.read_version,
        pre_version=c.pre_version,
        revision_turn=c.revision_turn,
        node=c.node,
        predicted_outcome=planned.predicted_outcome,
    )


def planned_fault(info: FaultInfo) -> PlannedFault:
    """The bench's planned fault for a recorded one (to replay the branch again)."""
    return PlannedFault(
        candidate=inject.Candidate(
            kind=info.kind,
            turn_id=info.turn_id,
            faulty_code=info.faulty_code,
            description=info.description,
            variable=info.variable,
            alias=info.alias,
            read_version=info.read_version,
            pre_version=info.pre_version,
            revision_turn=info.revision_turn,
            node=info.node,
        ),
        predicted_outcome=info.predicted_outcome,
    )


def run_branch(
    task: BenchTask,
    gold: GoldTask,
    fault: PlannedFault | None,
    workdir: Path,
    *,
    cell_timeout: float = 120.0,
    max_repairs: int = 1,
    shadow: Shadow | None = None,
    config: HarnessConfig | None = None,
    until_turn: int | None = None,
) -> BranchRun:
    """Replay ``task`` (up to the faulted turn if ``fault``, at most up to ``until_turn``)
    and record every activation."""
    info = fault_info(task, fault) if fault is not None else None
    last = fault.candidate.turn_id if fault is not None else len(task.turns)
    if until_turn is not None:
        last = min(last, until_turn)
    policy = RecordingPolicy(info, shadow=shadow)
    events = EventList()
    guard = GuardedSession(
        task_kernel(task, workdir, cell_timeout=cell_timeout),
        manager="deterministic",
        policy=policy,
        store="memory",
        config=config,
        sinks=[events],
        cell_timeout=cell_timeout,
    )
    results: list[TurnResult] = []
    try:
        with guard:
            worker = ReplayWorker(
                task, guard, gold, [fault] if fault else [], max_repairs=max_repairs
            )
            for turn in task.turns[:last]:
                result, _ = worker.run_turn(turn)
                results.append(result)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return BranchRun(
        activations=tuple(with_results(policy.activations, events.events)),
        results=tuple(results),
    )
