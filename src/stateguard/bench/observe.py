"""Kernel sessions for benchmark tasks, observations of executed turns, and judging.

An *observation* (`DsevalObservation`) is what a turn produced: the value of its last
expression, the variables the validator checks, its stdout, its error and its
namespace diff (computed from lineage). Values are pickled in the kernel by
`stateguard.bench.capture` and read here as plain data only (`kernel.transfer`). A
file the host refuses (a cell replaced it with one naming other callables) is not run
and does not end the session: the turn's observation records the refusal as its
error, so a submission is judged wrong on it and a reference excludes its turn.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stateguard.bench.judges import DsevalObservation, Judgement, judge_dseval, judge_longds_turn
from stateguard.bench.judges.dseval import checked_variables
from stateguard.bench.judges.infiagent import judge_infiagent
from stateguard.bench.judges.kramabench import judge_kramabench
from stateguard.bench.kernel_checks import (
    INFERRED,
    KernelCodeRunner,
    infer_missing_result,
    kernel_extras,
)
from stateguard.bench.loaders import stage_inputs
from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.errors import StateguardError
from stateguard.guard import GuardedSession, JsonlEventSink
from stateguard.kernel import ExecutionResult, KernelSession, ProbeResult
from stateguard.kernel.transfer import TransferError, load_value
from stateguard.lineage import CellRecord, LineageGraph, TrackedSession
from stateguard.llm import ChatModel

CAPTURE_DIR = ".stateguard-bench"
_MODULE = "__import__('stateguard.bench.capture', fromlist=['capture'])"
_ANSWER_CHARS = 3000
_TAGS = itertools.count()


def task_kernel(task: BenchTask, workdir: Path, *, cell_timeout: float = 120.0) -> KernelSession:
    """A kernel (not started) whose working directory holds the task's inputs.

    DSEval inputs are copied to ``inputs/`` (sessions may write there); LongDS and
    InfiAgent data are exposed read-only as ``data/``. ``workdir`` is emptied first.
    """
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    data_dir = None
    if task.suite == "dseval":
        stage_inputs(task, workdir)
    else:
        data_dir = task.data_dir
    return KernelSession(workdir=workdir, data_dir=data_dir, default_timeout=cell_timeout)


def guarded_task_session(
    task: BenchTask,
    workdir: Path,
    *,
    manager: str,
    model: ChatModel | None,
    manager_dir: Path,
    cell_timeout: float = 120.0,
) -> GuardedSession:
    """A guarded session over `task_kernel` (not started) for the agent or replay worker.

    The manager keeps ``states.sqlite``, checkpoints and ``manager_events.jsonl`` in
    ``manager_dir``.
    """
    return GuardedSession(
        task_kernel(task, workdir, cell_timeout=cell_timeout),
        manager=manager,
        model=model,
        run_dir=manager_dir,
        sinks=[JsonlEventSink(manager_dir / "manager_events.jsonl")],
    )


_SEED = (
    "__import__('random').seed(0)\n"
    "try:\n    __import__('numpy').random.seed(0)\nexcept ImportError:\n    pass\n"
)


def seed_randomness(task: BenchTask, session: TrackedSession) -> None:
    """Seed ``random`` and ``numpy.random`` in a DSEval task's started kernel, silently.

    DSEval runs a submission on a copy of the reference's state, so context code that
    draws random numbers (``L = [np.random.randn(...) ...]``) gives both the same values.
    Here the reference and the replay (or the agent) run in kernels of their own; seeding
    both alike at the start gives their context code the same draws as long as they run
    the same code before it. Binds no name.
    """
    if task.suite == "dseval" and session.kernel.is_alive():
        session.kernel.execute(_SEED, silent=True, store_history=False)


def open_session(
    task: BenchTask, workdir: Path, *, track: bool = True, cell_timeout: float = 120.0
) -> TrackedSession:
    """A started tracked session over `task_kernel` (gold runs and plans: no manager),
    its randomness seeded (`seed_randomness`)."""
    kernel = task_kernel(task, workdir, cell_timeout=cell_timeout)
    session = TrackedSession(kernel, track=track)
    session.start()
    seed_randomness(task, session)
    return session


def checked_names(task: BenchTask, turn: BenchTurn) -> list[str]:
    """Variables whose values the judge needs after the turn."""
    if task.suite == "dseval":
        return checked_variables(turn.validator)
    return ["answer"]


REFUSED = "the host refused the values the kernel wrote"


def _load(path: Path) -> dict[str, Any]:
    """The captured mapping, or one whose ``error`` says why the host refused the file."""
    try:
        value = load_value(path)  # the kernel wrote it: plain data types only
    except TransferError as exc:
        value = f"{exc}"
    if not isinstance(value, dict):
        detail = value if isinstance(value, str) else f"{path}: not a mapping"
        return {
            "has_result": False,
            "result": None,
            "namespace": {},
            "error": f"{REFUSED}: {detail}",
        }
    return value


def error_text(execution: ExecutionResult) -> str | None:
    """``"Name: message"`` of a failed execution, None when it succeeded."""
    if execution.ok or execution.error is None:
        return None if execution.ok else execution.status
    return f"{execution.error.ename}: {execution.error.evalue}"


def capture(
    session: TrackedSession, execution: ExecutionResult, names: Sequence[str], tag: str
) -> dict[str, Any]:
    """The cell's last-expression value and ``names``, read from the kernel silently."""
    path = session.kernel.workdir / CAPTURE_DIR / f"{tag}.pkl"
    path.unlink(missing_ok=True)
    if not session.kernel.is_alive():
        return {"has_result": False, "result": None, "namespace": {}}
    code = f"{_MODULE}.capture({str(path)!r}, {execution.execution_count!r}, {list(names)!r})"
    res = session.kernel.execute(code, silent=True, store_history=False)
    if not res.ok:
        raise StateguardError(f"capturing turn values failed: {error_text(res)}")
    return _load(path)


def dry_run(
    session: TrackedSession,
    code: str,
    names: Sequence[str],
    tag: str,
    preload: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> tuple[ProbeResult, dict[str, Any]]:
    """Run ``code`` on a fork of the namespace (nothing changes) and return what it produced."""
    path = session.kernel.workdir / CAPTURE_DIR / f"{tag}.pkl"
    path.unlink(missing_ok=True)
    call = f"{_MODULE}.dry_run({code!r}, {str(path)!r}, {list(names)!r}, {preload or {}!r})"
    probe = session.kernel.run_probe(call, timeout=timeout)
    if not probe.ok or not path.exists():
        detail = probe.error.evalue if probe.error else probe.status
        return probe, {"has_result": False, "result": None, "namespace": {}, "error": detail}
    return probe, _load(path)


def snapshot(session: TrackedSession, names: Sequence[str], path: Path) -> None:
    """Pickle the current values of ``names`` to ``path`` (silently, untracked)."""
    code = f"{_MODULE}.snapshot({str(path)!r}, {list(names)!r})"
    res = session.kernel.execute(code, silent=True, store_history=False)
    if not res.ok:
        raise StateguardError(f"snapshot of {list(names)} failed: {error_text(res)}")


def namespace_diff(
    graph: LineageGraph, cells: Sequence[CellRecord], before_cell: int
) -> dict[str, str]:
    """How the given cells changed the namespace, relative to cell ``before_cell``.

    ``added`` (name had no version before), ``updated`` (only in-place changes),
    ``replaced`` (rebound), ``deleted``. Names starting with ``_`` are left out, as
    DSEval does.
    """
    kinds: dict[str, list[str]] = {}
    for cell in cells:
        for key in cell.created:
            v = graph.version(key)
            kinds.setdefault(v.name, []).append(v.kind)
    diff: dict[str, str] = {}
    for name, ks in kinds.items():
        if name.startswith("_"):
            continue
        existed = any(v.cell < before_cell for v in graph.versions(name))
        if not existed:
            diff[name] = "added"
        elif all(k == "mutate" for k in ks):
            diff[name] = "updated"
        else:
            diff[name] = "replaced"
    for cell in cells:
        for name in cell.deleted:
            if not name.startswith("_") and name not in kinds:
                diff[name] = "deleted"
    return diff


def observation(
    execution: ExecutionResult,
    captured: dict[str, Any],
    diff: dict[str, str] | None = None,
    stdout: str | None = None,
    extras: dict[str, Any] | None = None,
    source: str | None = None,
) -> DsevalObservation:
    """The judged view of a turn (``source``: the code that ran)."""
    return DsevalObservation(
        result=captured.get("result") if captured.get("has_result") else None,
        namespace=dict(captured.get("namespace") or {}),
        stream=execution.stdout if stdout is None else stdout,
        error=error_text(execution) if captured.get("error") is None else captured["error"],
        namespace_diff=diff,
        extras=extras or {},
        source=source,
    )


def _plain(value: Any) -> Any:
    """numpy/pandas scalars to Python values, recursively through lists and dicts."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return value.item()
    return value


def prediction_of(obs: DsevalObservation) -> Any:
    """What a LongDS judge reads from an observation: result, else ``answer``, else stdout."""
    if obs.result is not None:
        return _plain(obs.result)
    if "answer" in obs.namespace:
        return _plain(obs.namespace["answer"])
    return obs.stream or ""


def judge(
    task: BenchTask,
    turn: BenchTurn,
    gold: DsevalObservation | None,
    submission: DsevalObservation | None = None,
    answer: str | None = None,
    session: TrackedSession | None = None,
    kernel_checks: bool = True,
) -> Judgement:
    """Judge a turn: DSEval against the gold observation, LongDS/InfiAgent against stated gold.

    ``answer`` (the worker's text) is judged when no submission observation applies.
    With ``session`` (the submission's), DSEval compare_fn code runs in fork probes of its
    kernel, and, unless ``kernel_checks`` is False, what ``model`` / ``table_test`` need is
    computed there first (`kernel_extras`) when the submission does not carry it.
    """
    if task.suite == "dseval":
        if gold is None:
            return Judgement(correct=False, score=0.0, excluded=True, details={"reason": "no gold"})
        sub = submission or DsevalObservation(error="no code result")
        runner = None
        if session is not None:
            runner = KernelCodeRunner(session)
            if kernel_checks and submission is not None and not sub.extras:
                tag = f"sub-{turn.turn_id}-{next(_TAGS)}"
                extras = kernel_extras(session, task, turn, tag, gold)
                if sub.result is None and gold.result is not None and sub.source:
                    extras[INFERRED] = infer_missing_result(session, sub.source, gold.result, tag)
                sub = sub.model_copy(update={"extras": extras})
        return judge_dseval(turn.validator, gold, sub, runner)
    if task.suite == "longds":
        prediction = prediction_of(submission) if submission is not None else (answer or "")
        return judge_longds_turn(turn, prediction)
    if task.suite == "kramabench":
        prediction = answer if answer is not None else (submission.stream if submission else "")
        return judge_kramabench(turn.meta.get("answer_type"), turn.gold, prediction)
    return judge_infiagent(turn.gold or {}, answer or (submission.stream if submission else ""))


def answer_text(execution: ExecutionResult) -> str:
    """The replay worker's answer: the cell's stdout and result (or its error)."""
    if not execution.ok:
        # The worker reports the failure, not the error message's content (it states no result).
        name = execution.error.ename if execution.error else execution.status
        return f"The code failed ({name}); there is no result."
    parts = [p.strip() for p in (execution.stdout, execution.result or "") if p and p.strip()]
    text = "\n".join(parts) or "(the code produced no output)"
    if len(text) > _ANSWER_CHARS:
        text = text[
            : text.rfind("\n", 0, _ANSWER_CHARS) if "\n" in text[:_ANSWER_CHARS] else _ANSWER_CHARS
        ]
    return text


def judge_reason(j: Judgement) -> str | None:
    """A one-line reason for a wrong or excluded verdict."""
    if j.correct and not j.excluded:
        return None
    if "reason" in j.details:
        return str(j.details["reason"])[:300]
    bad = [c for c in j.details.get("checks", []) if c.get("verdict") != "yes"]
    if bad:
        return "; ".join(f"{c['check']}: {c.get('reason', '')}" for c in bad)[:300]
    fields = j.details.get("fields")
    return str(fields)[:300] if fields else None
