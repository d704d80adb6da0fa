"""Run a benchmark suite: tasks in parallel, turns recorded as they finish, resumable.

`run_benchmark` loads the suite, skips tasks already finished in the run directory
(see `stateguard.bench.records` for the resume rule), and runs the others with
`run_task_job`, one task per job: in this process (``jobs=1``), in a process pool
(``jobs>1``, spawned processes, each with its own kernel), or as Ray tasks
(``backend="ray"``, see `stateguard.bench.ray_backend`). Jobs send `Event`s back;
only the parent writes the run directory.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_mod
import shutil
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from stateguard.bench.events import Emit, Event, EventKind
from stateguard.bench.gold import load_or_plan, load_or_run_gold
from stateguard.bench.judging import TurnJudge
from stateguard.bench.llm_run import run_llm_task
from stateguard.bench.loaders import load_suite
from stateguard.bench.longds_protocol import run_longds_protocol_task
from stateguard.bench.observe import guarded_task_session
from stateguard.bench.ray_backend import run_with_ray
from stateguard.bench.records import InjectionRecord, RunConfig, RunStore, TurnResult
from stateguard.bench.replay import ReplayWorker, skipped_results
from stateguard.bench.search_run import run_search_task
from stateguard.bench.tasks import BenchTask, SuiteLoad
from stateguard.errors import StateguardError
from stateguard.kernel.interpreter import use_for_kernels
from stateguard.llm import UsageMeter, build_model, load_model_config

__all__ = [
    "Emit",
    "Event",
    "EventKind",
    "RunOutcome",
    "load_tasks",
    "load_tasks_checked",
    "run_benchmark",
]

Progress = Callable[[Event], None]


def load_tasks_checked(config: RunConfig) -> SuiteLoad:
    """The suite's tasks in loader order, cut as configured; malformed tasks rejected."""
    return load_suite(
        config.suite,
        config.path,
        start_index=config.start_index,
        task_limit=config.limit,
        turn_limit=config.turn_limit,
        path_maps=config.path_maps,
        lake=config.lake,
    )


def load_tasks(config: RunConfig) -> list[BenchTask]:
    """The tasks that load (see `load_tasks_checked`); none at all is an error."""
    loaded = load_tasks_checked(config)
    if not loaded.tasks and not loaded.rejected:
        raise StateguardError(f"no {config.suite} tasks found under {config.path}")
    return list(loaded.tasks)


def _chat_model(config: RunConfig) -> Any:
    """The configured chat model when the worker or the manager needs one, else None."""
    if config.worker != "llm" and config.manager not in ("llm", "freeform", "window", "hybrid"):
        return None
    cfg_file = Path(config.llm_config_file) if config.llm_config_file else None
    model = build_model(load_model_config(config.llm_overrides, cfg_file), meter=UsageMeter())
    load = getattr(model, "load", None)
    if callable(load):
        load()
    return model


def _replay(task: BenchTask, config: RunConfig, run_dir: Path, skip: set[int], emit: Emit) -> None:
    work = run_dir / "work"
    gold = load_or_run_gold(
        task, run_dir / "gold", work / f"{task.task_id}-gold", config.cell_timeout
    )
    faults = []
    if config.inject:
        faults = load_or_plan(
            task,
            gold,
            config.inject,
            run_dir / "plans",
            work / f"{task.task_id}-plan",
            seed=config.seed,
            max_injections=config.max_injections,
            cell_timeout=config.cell_timeout,
        )
    manager_dir = run_dir / "manager" / task.task_id
    shutil.rmtree(manager_dir, ignore_errors=True)  # a re-run task starts a fresh state store
    guard = guarded_task_session(
        task,
        work / task.task_id,
        manager=config.manager,
        model=_chat_model(config),
        manager_dir=manager_dir,
        cell_timeout=config.cell_timeout,
    )
    try:
        with guard:
            worker = ReplayWorker(task, guard, gold, faults, max_repairs=config.max_repairs)
            for result, injection in worker.run():
                if injection is not None:
                    payload = injection.model_dump()
                    emit(Event(kind="injection", task_id=task.task_id, payload=payload))
                if result.turn_id not in skip:
                    emit(Event(kind="turn", task_id=task.task_id, payload=result.model_dump()))
    finally:
        shutil.rmtree(work / task.task_id, ignore_errors=True)


def run_task_job(
    task: BenchTask, config: RunConfig, run_dir: str, skip: set[int], emit: Emit
) -> None:
    """Run one task and emit its turns; never raises (errors become skipped turns)."""
    root = Path(run_dir)
    sent: set[int] = set(skip)
    turn_judge = TurnJudge(config)

    def tracking_emit(event: Event) -> None:
        if event.kind == "turn":
            sent.add(int(event.payload["turn_id"]))
            event = event.model_copy(update={"payload": turn_judge.apply(task, event.payload)})
        emit(event)

    emit(Event(kind="task_start", task_id=task.task_id, payload={"turns": len(task.turns)}))
    try:
        if task.skipped:
            for r in skipped_results(task, f"task skipped: {task.skipped_reason}"):
                tracking_emit(Event(kind="turn", task_id=task.task_id, payload=r.model_dump()))
        elif config.worker == "replay":
            if all(t.reference_code is None for t in task.turns):
                for r in skipped_results(task, "no reference code to replay"):
                    tracking_emit(Event(kind="turn", task_id=task.task_id, payload=r.model_dump()))
            else:
                _replay(task, config, root, skip, tracking_emit)
        elif config.search is not None:
            run_search_task(task, config, root, skip, tracking_emit, _chat_model(config))
        elif config.worker_protocol == "longds":
            model = _chat_model(config)
            run_longds_protocol_task(task, config, root, skip, tracking_emit, model)
        else:
            run_llm_task(task, config, root, skip, tracking_emit, _chat_model(config))
    except Exception as exc:  # a harness failure must not lose the other tasks
        error = f"{type(exc).__name__}: {exc}"
        emit(
            Event(
                kind="error",
                task_id=task.task_id,
                payload={"error": error, "traceback": traceback.format_exc()},
            )
        )
        rest = {t.turn_id for t in task.turns} - sent
        for r in skipped_results(task, f"runner error: {error}", rest):
            emit(Event(kind="turn", task_id=task.task_id, payload=r.model_dump()))
    emit(Event(kind="task_end", task_id=task.task_id))


def _queue_job(
    task: BenchTask, config: RunConfig, run_dir: str, skip: set[int], queue: Any
) -> None:
    run_task_job(task, config, run_dir, skip, queue.put)


class RunOutcome(BaseModel):
    """What `run_benchmark` did."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    tasks_total: int
    tasks_run: int
    turns_recorded: int
    errors: int
    tasks_rejected: int = 0


def run_benchmark(
    config: RunConfig,
    run_dir: Path | str,
    *,
    jobs: int = 1,
    backend: Literal["local", "ray"] = "local",
    progress: Progress | None = None,
    ray_address: str | None = None,
) -> RunOutcome:
    """Run (or resume) a benchmark into ``run_dir``; see the module docstring."""
    if jobs < 1:
        raise StateguardError(f"--jobs must be >= 1, got {jobs}")
    if config.worker == "llm" and config.inject:
        raise StateguardError("--inject needs --worker replay (faults are planted in replays)")
    if config.search is not None and (config.worker != "llm" or config.manager != "none"):
        raise StateguardError("--search needs --worker llm and --manager none")
    use_for_kernels(config.kernel_python)  # every kernel of the run, in job processes too
    store = RunStore(run_dir)
    loaded = load_tasks_checked(config)
    if not loaded.tasks and not loaded.rejected:
        raise StateguardError(f"no {config.suite} tasks found under {config.path}")
    tasks = list(loaded.tasks)
    store.prepare(config)
    store.write_rejections(loaded.rejected)
    done = store.done_turns()
    pending = [
        (t, done.get(t.task_id, set()))
        for t in tasks
        if done.get(t.task_id, set()) != {x.turn_id for x in t.turns}
    ]
    counts = {"turns": 0, "errors": 0}

    def handle(event: Event) -> None:
        if event.kind == "turn":
            if store.append_turn(TurnResult.model_validate(event.payload)):
                counts["turns"] += 1
        elif event.kind == "injection":
            store.append_injection(InjectionRecord.model_validate(event.payload))
        elif event.kind == "error":
            counts["errors"] += 1
            store.append_error(event.task_id, event.payload.get("traceback", ""))
        if progress is not None:
            progress(event)

    if progress is not None:
        progress(
            Event(
                kind="task_start",
                task_id="*",
                payload={
                    "tasks": len(tasks),
                    "turns_total": sum(len(t.turns) for t in tasks),
                    "turns_done": sum(len(v) for v in done.values()),
                },
            )
        )
    rd = str(Path(run_dir).resolve())
    if backend == "ray":
        run_with_ray(pending, config, rd, handle, job=run_task_job, address=ray_address)
    elif jobs == 1 or len(pending) <= 1:
        for task, skip in pending:
            run_task_job(task, config, rd, skip, handle)
    else:
        _run_pool(pending, config, rd, jobs, handle)
    return RunOutcome(
        run_dir=Path(run_dir),
        tasks_total=len(tasks),
        tasks_run=len(pending),
        turns_recorded=counts["turns"],
        errors=counts["errors"],
        tasks_rejected=len(loaded.rejected),
    )


def _run_pool(
    pending: list[tuple[BenchTask, set[int]]],
    config: RunConfig,
    run_dir: str,
    jobs: int,
    handle: Emit,
) -> None:
    """Process pool over tasks; the parent drains the event queue while jobs run."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        queue = manager.Queue()
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [
                pool.submit(_queue_job, task, config, run_dir, skip, queue)
                for task, skip in pending
            ]
            while True:
                try:
                    event = queue.get(timeout=0.2)
                except queue_mod.Empty:
                    event = None
                if event is not None:
                    handle(event)
                    continue
                if all(f.done() for f in futures):
                    break
            while not queue.empty():
                handle(queue.get())
            for f in futures:
                f.result()  # a job that crashed outright (not a task error) surfaces here
