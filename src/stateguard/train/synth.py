"""Counterfactual manager-trajectory synthesis over a benchmark suite with reference code.

Per task: the clean run (gold, cached like the bench does), the clean branch, and for
every injector the faults the bench plans (`stateguard.bench.gold.load_or_plan`, up to
``faults_per_task`` at distinct turns, dry-run on the clean state), each replayed as
its own branch (`stateguard.train.branches`). A branch's activations become
trajectories (`stateguard.train.records`):

* the clean branch: one ``clean`` trajectory of its usable turns;
* a faulted branch: a ``counterfactual`` trajectory (turn 1 through the faulted turn's
  ``REPAIR``) and a ``repair`` trajectory (what follows the repair in that turn).

What is filtered, and counted by reason (`Filtered`):

* clean turns: the reference code fails or the turn is not judged; the clean replay is
  judged wrong; the labelled commit was refused;
* faulted branches: the dry run or the replay shows the fault had no effect on the
  judged result; the faulted turn is not judged; the repair did not fix the turn; the
  commit after the repair was refused; the replay failed.

Revisions (`stateguard.train.revisions`, on by default): per task and revision kind, up
to ``revisions_per_kind`` revised tasks (a revision turn inserted after turn k, gold
recomputed). Each gives a ``clean`` trajectory from the revision turn on (later turns
recompute and commit) and, for each stale reuse of a pre-revision value at a later
turn, a counterfactual and a repair trajectory; all carry the `RevisionInfo`. Filtered:
the revision had no effect on any later result; the revision turn fails; the revised
turn is not rerunnable and re-running it unchanged changes later results.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from stateguard.bench.gold import GoldTask, PlannedFault, load_or_plan, load_or_run_gold
from stateguard.bench.loaders import load_suite
from stateguard.bench.records import InjectKind, TurnResult
from stateguard.bench.tasks import BenchTask, Suite
from stateguard.errors import StateguardError
from stateguard.train.branches import BranchRun, fault_info, run_branch
from stateguard.train.records import (
    Activation,
    FaultInfo,
    ManagerTrajectory,
    RevisionInfo,
    TurnOutcome,
)
from stateguard.train.revisions import (
    REVISION_KINDS,
    choose_revisions,
    control_site,
    revised_task,
    revision_effect,
    revision_info,
    stale_after_revision,
)

INJECTORS: tuple[str, ...] = get_args(InjectKind)
"""Every injector the bench has (``stateguard.bench.inject``)."""


class SynthConfig(BaseModel):
    """What to synthesize from."""

    model_config = ConfigDict(frozen=True)

    suite: Suite
    path: Path
    injectors: tuple[str, ...] = INJECTORS
    faults_per_task: int = Field(default=2, ge=0)
    """Faults planned per task and injector (at distinct turns), each its own branch."""
    seed: int = 0
    """Seed of the bench's fault choice."""
    start_index: int = 0
    limit: int | None = None
    turn_limit: int | None = None
    path_maps: tuple[str, ...] = ()
    cell_timeout: float = 120.0
    max_repairs: int = Field(default=1, ge=1)
    """Redos the obedient replay makes after repair hints."""
    revisions: tuple[str, ...] = REVISION_KINDS
    """Revision kinds applied to the task itself (empty: none)."""
    revisions_per_kind: int = Field(default=1, ge=0)
    """Revised tasks per task and revision kind (at distinct turns)."""


class Filtered(BaseModel):
    """A branch (or a clean turn) left out, and why."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    unit: Literal["branch", "turn"]
    reason: str
    injector: str | None = None
    turn_id: int | None = None
    detail: str = ""
    revision: str | None = None
    """The revision kind, for a revised task's branches."""


class TaskSynth(BaseModel):
    """What one task gave."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    trajectories: tuple[ManagerTrajectory, ...] = ()
    filtered: tuple[Filtered, ...] = ()
    branches: int = 0
    seconds: float = 0.0


def _outcome(r: TurnResult) -> TurnOutcome:
    return TurnOutcome(
        turn_id=r.turn_id,
        correct=r.correct,
        first_correct=r.first_correct,
        attempts=r.attempts,
        fixed_by_repair=r.fixed_by_repair,
    )


def _refused(acts: Iterable[Activation]) -> bool:
    return any((a.result or "").startswith("error:") for a in acts)


def clean_trajectory(
    task: BenchTask, gold: GoldTask, run: BranchRun
) -> tuple[ManagerTrajectory | None, list[Filtered]]:
    """The clean branch's trajectory of usable turns, and the turns left out."""
    filtered: list[Filtered] = []
    keep: set[int] = set()
    for r in run.results:
        turn_acts = [a for a in run.activations if a.turn == r.turn_id]
        reason = None
        if r.skipped or r.correct is None:
            reason = "clean turn not judged"
            detail = r.skipped_reason or ""
        elif not r.correct:
            reason, detail = "clean replay judged wrong", r.judge_reason or ""
        elif _refused(turn_acts):
            reason, detail = "labelled commit refused", turn_acts[-1].result or ""
        if reason is not None:
            filtered.append(
                Filtered(
                    task_id=task.task_id,
                    unit="turn",
                    reason=reason,
                    turn_id=r.turn_id,
                    detail=detail[:300],
                )
            )
        else:
            keep.add(r.turn_id)
    acts = tuple(a for a in run.activations if a.turn in keep)
    if not acts:
        return None, filtered
    traj = ManagerTrajectory(
        id=f"{task.suite}/{task.task_id}/clean/clean/0",
        branch_id=f"{task.suite}/{task.task_id}/clean",
        kind="clean",
        suite=task.suite,
        task_id=task.task_id,
        activations=acts,
        turns=tuple(_outcome(r) for r in run.results if r.turn_id in keep),
    )
    return traj, filtered


def fault_trajectories(
    task: BenchTask, info: FaultInfo, n: int, run: BranchRun
) -> tuple[list[ManagerTrajectory], Filtered | None]:
    """A faulted branch's counterfactual and repair trajectories, or why it is filtered."""
    j = info.turn_id

    def out(reason: str, detail: str = "") -> tuple[list[ManagerTrajectory], Filtered]:
        f = Filtered(
            task_id=task.task_id,
            unit="branch",
            reason=reason,
            injector=info.kind,
            turn_id=j,
            detail=detail[:300],
        )
        return [], f

    r = next((x for x in run.results if x.turn_id == j), None)
    if r is None or r.first_correct is None or r.correct is None:
        return out("faulted turn not judged", (r.skipped_reason or "") if r else "")
    if r.first_correct:
        return out("fault had no effect (replay)", info.description)
    turn_acts = [a for a in run.activations if a.turn == j]
    cut = next((a.index for a in turn_acts if a.label_kind == "REPAIR"), None)
    if cut is None:
        return out("no repair on the faulted turn", "the labelled path never reached REPAIR")
    if not r.correct or r.attempts < 2:
        return out("repair did not fix the turn", r.judge_reason or "")
    after = [a for a in turn_acts if a.index > cut]
    if _refused(after) or not after or after[-1].label_kind != "COMMIT_STATE":
        return out("commit after the repair refused", after[-1].result if after else "")
    base = f"{task.suite}/{task.task_id}"
    branch = f"{base}/{info.kind}/{n}"
    prefix = tuple(a for a in run.activations if a.index <= cut)
    outcomes = tuple(_outcome(x) for x in run.results)
    common = dict(
        branch_id=branch,
        suite=task.suite,
        task_id=task.task_id,
        injector=info.kind,
        fault=info,
    )
    return [
        ManagerTrajectory(
            id=f"{base}/counterfactual/{info.kind}/{n}",
            kind="counterfactual",
            activations=prefix,
            turns=outcomes,
            **common,
        ),
        ManagerTrajectory(
            id=f"{base}/repair/{info.kind}/{n}",
            kind="repair",
            activations=tuple(after),
            turns=outcomes[-1:],
            **common,
        ),
    ], None


def synth_task(task: BenchTask, config: SynthConfig, out: Path) -> TaskSynth:
    """Every branch of one task (never raises: a failure is a filtered branch)."""
    started = time.monotonic()
    cache, work = out / "cache", out / "work"
    trajs: list[ManagerTrajectory] = []
    filtered: list[Filtered] = []
    branches = 0
    timeout = config.cell_timeout
    try:
        gold = load_or_run_gold(task, cache / "gold", work / f"{task.task_id}-gold", timeout)
        run = run_branch(
            task,
            gold,
            None,
            work / task.task_id,
            cell_timeout=timeout,
            max_repairs=config.max_repairs,
        )
        branches += 1
        clean, dropped = clean_trajectory(task, gold, run)
        filtered += dropped
        if clean is not None:
            trajs.append(clean)
        for kind in config.injectors:
            if config.faults_per_task == 0:
                break
            plan = load_or_plan(
                task,
                gold,
                kind,
                cache / "plans",
                work / f"{task.task_id}-plan",
                seed=config.seed,
                max_injections=config.faults_per_task,
                cell_timeout=timeout,
            )
            for n, fault in enumerate(plan):
                info = fault_info(task, fault)
                if fault.predicted_outcome == "none":
                    filtered.append(
                        Filtered(
                            task_id=task.task_id,
                            unit="branch",
                            reason="fault had no effect (dry run)",
                            injector=kind,
                            turn_id=info.turn_id,
                            detail=info.description,
                        )
                    )
                    continue
                try:
                    run = run_branch(
                        task,
                        gold,
                        fault,
                        work / task.task_id,
                        cell_timeout=timeout,
                        max_repairs=config.max_repairs,
                    )
                except Exception as exc:  # one branch failing must not lose the task
                    filtered.append(
                        Filtered(
                            task_id=task.task_id,
                            unit="branch",
                            reason="replay failed",
                            injector=kind,
                            turn_id=info.turn_id,
                            detail=f"{type(exc).__name__}: {exc}"[:300],
                        )
                    )
                    continue
                branches += 1
                got, why = fault_trajectories(task, info, n, run)
                trajs += got
                if why is not None:
                    filtered.append(why)
        for rkind in config.revisions:
            got_t, got_f, n_branches = revision_branches(task, gold, rkind, config, out)
            trajs += got_t
            filtered += got_f
            branches += n_branches
    except Exception as exc:
        filtered.append(
            Filtered(
                task_id=task.task_id,
                unit="branch",
                reason="replay failed",
                detail=(f"{type(exc).__name__}: {exc}\n" + traceback.format_exc())[-300:],
            )
        )
    return TaskSynth(
        task_id=task.task_id,
        trajectories=tuple(trajs),
        filtered=tuple(filtered),
        branches=branches,
        seconds=time.monotonic() - started,
    )


def _faulted(
    task: BenchTask, gold: GoldTask, fault: PlannedFault, n: int, config: SynthConfig, out: Path
) -> tuple[list[ManagerTrajectory], Filtered | None]:
    info = fault_info(task, fault)
    try:
        run = run_branch(
            task,
            gold,
            fault,
            out / "work" / task.task_id,
            cell_timeout=config.cell_timeout,
            max_repairs=config.max_repairs,
        )
    except Exception as exc:  # one branch failing must not lose the task
        why = Filtered(
            task_id=task.task_id,
            unit="branch",
            reason="replay failed",
            injector=info.kind,
            turn_id=info.turn_id,
            detail=f"{type(exc).__name__}: {exc}"[:300],
        )
        return [], why
    return fault_trajectories(task, info, n, run)


def _as_revision(
    t: ManagerTrajectory, original: BenchTask, info: RevisionInfo, tag: str
) -> ManagerTrajectory:
    base = f"{original.suite}/{original.task_id}"
    rest = t.id.removeprefix(f"{t.suite}/{t.task_id}/")
    kind, _, tail = rest.partition("/")
    return t.model_copy(
        update={
            "id": f"{base}/{kind}/{tag}/{tail}",
            "branch_id": f"{base}/{tag}/" + t.branch_id.removeprefix(f"{t.suite}/{t.task_id}/"),
            "task_id": original.task_id,
            "revision": info,
        }
    )


def revision_branches(
    task: BenchTask, gold: GoldTask, kind: str, config: SynthConfig, out: Path
) -> tuple[list[ManagerTrajectory], list[Filtered], int]:
    """The branches of ``task`` revised by ``kind`` (see the module docstring)."""
    trajs: list[ManagerTrajectory] = []
    filtered: list[Filtered] = []
    branches = 0
    timeout = config.cell_timeout
    sites = choose_revisions(task, gold, kind, seed=config.seed, per_kind=config.revisions_per_kind)
    for r, site in enumerate(sites):
        k = site.turn_id

        def drop(reason: str, detail: str, k: int = k, sink: list[Filtered] = filtered) -> None:
            sink.append(
                Filtered(
                    task_id=task.task_id,
                    unit="branch",
                    reason=reason,
                    turn_id=k,
                    detail=detail[:300],
                    revision=kind,
                )
            )

        rtask = revised_task(task, site, r)
        rgold = load_or_run_gold(
            rtask, out / "cache" / "gold", out / "work" / f"{rtask.task_id}-gold", timeout
        )
        failed = rgold.turn(k + 1).skipped_reason
        if failed:
            drop("revision turn fails", failed)
            continue
        if not site.rerunnable:
            ctask = revised_task(task, control_site(site), f"{r}-control")
            cgold = load_or_run_gold(
                ctask, out / "cache" / "gold", out / "work" / f"{ctask.task_id}-gold", timeout
            )
            failed = cgold.turn(k + 1).skipped_reason
            if failed or revision_effect(task, gold, ctask, cgold, k):
                drop("revised turn not idempotent (a re-run changes later results)", failed or "")
                continue
        effect = revision_effect(task, gold, rtask, rgold, k)
        if not effect:
            drop("revision had no effect on any later result", site.description)
            continue
        info = revision_info(site, effect, rtask)
        tag = f"revision-{kind}-{r}"
        run = run_branch(
            rtask,
            rgold,
            None,
            out / "work" / rtask.task_id,
            cell_timeout=timeout,
            max_repairs=config.max_repairs,
        )
        branches += 1
        clean, dropped = clean_trajectory(rtask, rgold, run)
        filtered += [
            f.model_copy(update={"task_id": task.task_id, "revision": kind}) for f in dropped
        ]
        if clean is not None:
            acts = tuple(a for a in clean.activations if a.turn > k)
            turns = tuple(o for o in clean.turns if o.turn_id > k)
            if acts:
                clean = clean.model_copy(update={"activations": acts, "turns": turns})
                trajs.append(_as_revision(clean, task, info, tag))
        for n, fault in enumerate(
            stale_after_revision(
                rtask, rgold, k + 1, seed=config.seed, max_faults=max(config.faults_per_task, 1)
            )
        ):
            got, why = _faulted(rtask, rgold, fault, n, config, out)
            branches += 1
            trajs += [_as_revision(t, task, info, tag) for t in got]
            if why is not None:
                filtered.append(why.model_copy(update={"task_id": task.task_id, "revision": kind}))
    return trajs, filtered, branches


def load_synth_tasks(config: SynthConfig) -> tuple[list[BenchTask], list[Filtered]]:
    """The suite's runnable tasks, and the skipped or rejected ones as filtered."""
    loaded = load_suite(
        config.suite,
        config.path,
        start_index=config.start_index,
        task_limit=config.limit,
        turn_limit=config.turn_limit,
        path_maps=config.path_maps,
    )
    if not loaded.tasks and not loaded.rejected:
        raise StateguardError(f"no {config.suite} tasks found under {config.path}")
    filtered = [
        Filtered(
            task_id=r.task_id,
            unit="branch",
            reason="task rejected by the loader",
            detail=r.reason[:300],
        )
        for r in loaded.rejected
    ]
    tasks: list[BenchTask] = []
    for t in loaded.tasks:
        if t.skipped:
            filtered.append(
                Filtered(
                    task_id=t.task_id,
                    unit="branch",
                    reason="task skipped",
                    detail=(t.skipped_reason or "")[:300],
                )
            )
        elif all(x.reference_code is None for x in t.turns):
            filtered.append(
                Filtered(task_id=t.task_id, unit="branch", reason="no reference code to replay")
            )
        else:
            tasks.append(t)
    return tasks, filtered


def synthesize(
    config: SynthConfig,
    out: Path,
    *,
    jobs: int = 1,
    progress: Callable[[TaskSynth], None] | None = None,
) -> tuple[list[TaskSynth], list[Filtered]]:
    """Synthesize every task (in ``jobs`` spawned processes when > 1)."""
    if jobs < 1:
        raise StateguardError(f"--jobs must be >= 1, got {jobs}")
    tasks, filtered = load_synth_tasks(config)
    out = out.resolve()
    done: list[TaskSynth] = []
    if jobs == 1 or len(tasks) <= 1:
        for t in tasks:
            done.append(synth_task(t, config, out))
            if progress:
                progress(done[-1])
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [pool.submit(synth_task, t, config, out) for t in tasks]
            for f in futures:
                done.append(f.result())
                if progress:
                    progress(done[-1])
    return done, filtered
