"""The clean reference run of a task (gold) and the injection plan built on it.

Gold run: the task's turns replayed in one fresh tracked kernel, setup code then
reference code per turn, no manager, no injection. It yields per turn the gold
observation (DSEval judges against it), whether the reference code failed (such
turns are skipped, with the exception as reason), the dependencies observed by
lineage (turn j depends on turn i when a cell of j read a version a cell of i
created; module imports do not count), and the `TurnFacts` injection needs.

Injection plan: candidates from `stateguard.bench.inject`, each dry-run on a fork
of the clean state at its turn (stale-reuse candidates get the pre-revision value
from a snapshot taken before the revising turn) and judged against gold, so that
`inject.choose` can prefer faults that actually change the judged result.

Both are cached as pickles in the run directory (``gold/``, ``plans/``).
"""

from __future__ import annotations

import pickle
import random
import re
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from stateguard.bench import inject
from stateguard.bench.judges import DsevalObservation
from stateguard.bench.kernel_checks import kernel_extras
from stateguard.bench.losses import missing_library
from stateguard.bench.observe import (
    capture,
    checked_names,
    dry_run,
    error_text,
    judge,
    namespace_diff,
    observation,
    open_session,
    snapshot,
)
from stateguard.bench.tasks import BenchTask
from stateguard.kernel.transfer import TransferError, load_value
from stateguard.lineage import CellRecord, LineageGraph

_MAX_DRY_RUNS = 40
_SKIP_NAMES = ("_",)


class GoldTurn(BaseModel):
    """The clean run's view of one turn."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    turn_id: int
    skipped_reason: str | None = None
    depends_on: tuple[int, ...] = ()
    observation: DsevalObservation | None = None
    facts: inject.TurnFacts


class GoldTask(BaseModel):
    """The clean run of one task."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    task_id: str
    turns: tuple[GoldTurn, ...]
    versions: dict[str, inject.VersionFact]
    names: tuple[str, ...]

    def turn(self, turn_id: int) -> GoldTurn:
        """The gold of turn ``turn_id``."""
        return self.turns[turn_id - 1]


class PlannedFault(BaseModel):
    """A chosen fault and whether a dry run predicted it to change the judged result."""

    model_config = ConfigDict(frozen=True)

    candidate: inject.Candidate
    predicted_effective: bool | None = None
    predicted_outcome: str | None = None
    """Dry-run result: "silent" (wrong, no error), "crash" or "none" (unchanged)."""
    candidates_total: int = 0
    candidates_effective: int = 0


def _is_module(graph: LineageGraph, key: str) -> bool:
    return graph.version(key).summary.startswith("module ")


def _facts(
    graph: LineageGraph, code: str, turn_id: int, ref_cell: CellRecord, ok: bool
) -> inject.TurnFacts:
    """Injection facts of a turn from the clean run's lineage of its reference cell."""
    reads = tuple(
        dict.fromkeys(r.version for r in ref_cell.reads if not _is_module(graph, r.version))
    )
    rerunnable = ok
    rebinds: dict[str, None] = {}
    for key in ref_cell.created:
        v = graph.version(key)
        if v.name.startswith(_SKIP_NAMES):
            continue
        older = [p.key for p in graph.versions(v.name) if p.cell < ref_cell.cell]
        if v.kind == "mutate" or any(o in graph.ancestors(key) for o in older):
            rerunnable = False
            rebinds[v.root or v.name] = None
    basis = set(reads)
    for key in reads:
        basis |= graph.ancestors(key)
    after_revision = any(
        graph.version(k).version >= 2 and not graph.version(k).name.startswith(_SKIP_NAMES)
        for k in basis
        if not _is_module(graph, k)
    )
    return inject.TurnFacts(
        turn_id=turn_id,
        code=code,
        ok=ok,
        reads=reads,
        created=tuple(ref_cell.created),
        rerunnable=rerunnable,
        rebinds=tuple(rebinds) if ok else (),
        after_revision=after_revision,
    )


_NO_MODULE = re.compile(r"No module named '([^'.]+)")


def _failure_reason(error: str, setup_error: str | None, lacking: list[str]) -> str:
    """Why a turn's reference code failed, naming a library the kernel lacks.

    A turn whose code names a variable that does not exist, after an earlier turn needed a
    missing library, is put down to that library (the variables it would have made were
    never made), which is what ``skipped_by_reason`` counts.
    """
    reason = f"reference code fails in a clean run: {error}"
    if setup_error:
        reason += f" (setup code failed first: {setup_error})"
    needed = _NO_MODULE.search(error) or (_NO_MODULE.search(setup_error or ""))
    if needed is not None:
        library = needed.group(1)
    elif lacking and error.startswith("NameError"):
        library = lacking[-1]
        reason += " (after an earlier turn"
    else:
        return reason
    suffix = ")" if needed is None else ""
    return (
        f"{reason}{suffix}: needs the library '{library}', which the kernel's Python lacks "
        "(--kernel-python runs the kernels on an interpreter that has it)"
    )


def run_gold(task: BenchTask, workdir: Path, cell_timeout: float = 120.0) -> GoldTask:
    """Replay the task's reference code cleanly and record gold, failures and lineage."""
    session = open_session(task, workdir, cell_timeout=cell_timeout)
    lacking: list[str] = []  # libraries earlier reference cells needed and the kernel lacks
    turn_of: dict[int, int] = {}
    gold_turns: list[GoldTurn] = []
    try:
        for turn in task.turns:
            cells: list[CellRecord] = []
            setup = turn.meta.get("setup_code")
            setup_error = None
            if setup:
                res = session.execute(setup)
                setup_error = error_text(res.execution)
                if res.cell is not None:
                    cells.append(res.cell)
            code = turn.reference_code or ""
            res = session.execute(code)
            ref = res.cell
            ok = res.execution.ok
            captured = capture(
                session, res.execution, checked_names(task, turn), f"gold-{turn.turn_id}"
            )
            if ref is not None:
                cells.append(ref)
            for c in cells:
                turn_of[c.cell] = turn.turn_id
            diff = None
            if ref is not None:
                diff = namespace_diff(session.graph, [ref], ref.cell)
            extras = kernel_extras(session, task, turn, f"gold-{turn.turn_id}", None, cell_timeout)
            obs = observation(res.execution, captured, diff, extras=extras)
            reason = None
            if not ok:
                reason = _failure_reason(error_text(res.execution) or "", setup_error, lacking)
                library = missing_library(reason)
                if library and library not in lacking:
                    lacking.append(library)
            deps: set[int] = set()
            for c in cells:
                for r in c.reads:
                    if _is_module(session.graph, r.version):
                        continue
                    i = turn_of.get(session.graph.version(r.version).cell)
                    if i is not None and i < turn.turn_id:
                        deps.add(i)
            facts = (
                _facts(session.graph, code, turn.turn_id, ref, ok)
                if ref is not None
                else inject.TurnFacts(turn_id=turn.turn_id, code=code, ok=False)
            )
            gold_turns.append(
                GoldTurn(
                    turn_id=turn.turn_id,
                    skipped_reason=reason,
                    depends_on=tuple(sorted(deps)),
                    observation=obs,
                    facts=facts,
                )
            )
        graph = session.graph
        versions: dict[str, inject.VersionFact] = {}
        names: set[str] = set()
        for cell in graph.cells:
            for key in cell.created:
                v = graph.version(key)
                names.add(v.name)
                if cell.cell in turn_of and not _is_module(graph, key):
                    # faults act on variables: a part's version counts for its variable
                    versions[key] = inject.VersionFact(
                        key=key, name=v.root or v.name, version=v.version, turn=turn_of[cell.cell]
                    )
            for read in cell.reads:
                # a column read before any write of its own stands for its frame as the
                # frame's writer left it (a "derived" version): it belongs to that turn
                v = graph.version(read.version)
                if read.version not in versions and v.kind == "derived" and v.cell in turn_of:
                    versions[read.version] = inject.VersionFact(
                        key=read.version, name=v.root or v.name, version=v.version,
                        turn=turn_of[v.cell],
                    )  # fmt: skip
        return GoldTask(
            task_id=task.task_id, turns=tuple(gold_turns), versions=versions, names=tuple(names)
        )
    finally:
        session.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def plan_faults(
    task: BenchTask,
    gold: GoldTask,
    kind: str,
    *,
    seed: int,
    max_injections: int,
    workdir: Path,
    cell_timeout: float = 120.0,
) -> list[PlannedFault]:
    """Candidates of ``kind``, dry-run on the clean state, and the seeded choice among them."""
    facts = [t.facts for t in gold.turns]
    found = inject.candidates(kind, facts, gold.versions, set(gold.names))
    if not found:
        return []
    rng = random.Random(f"dry-run:{seed}:{task.task_id}")
    tested = sorted(found, key=lambda c: c.ident)
    rng.shuffle(tested)
    tested = tested[:_MAX_DRY_RUNS]
    outcome = _dry_run_all(task, gold, tested, workdir, cell_timeout)
    chosen = inject.choose(found, outcome, seed, task.task_id, max_injections)
    n_effective = sum(1 for v in outcome.values() if v != "none")
    return [
        PlannedFault(
            candidate=c,
            predicted_effective=None if c.ident not in outcome else outcome[c.ident] != "none",
            predicted_outcome=outcome.get(c.ident),
            candidates_total=len(found),
            candidates_effective=n_effective,
        )
        for c in chosen
    ]


def _dry_run_all(
    task: BenchTask,
    gold: GoldTask,
    tested: list[inject.Candidate],
    workdir: Path,
    cell_timeout: float,
) -> dict[str, str]:
    """Replay cleanly (untracked) and dry-run each tested candidate: silent | crash | none."""
    if not tested:
        return {}
    session = open_session(task, workdir, track=False, cell_timeout=cell_timeout)
    # Inside the kernel's working directory, created by the kernel when it writes the
    # first snapshot: a sandboxed kernel may write nowhere else.
    snaps = workdir / ".stateguard-bench" / "snapshots"
    last_turn = max(c.turn_id for c in tested)
    effective: dict[str, str] = {}
    try:
        for turn in task.turns[:last_turn]:
            t = turn.turn_id
            revised = sorted({c.variable for c in tested if c.revision_turn == t and c.variable})
            if revised:
                snapshot(session, revised, snaps / f"turn{t}.pkl")
            if turn.meta.get("setup_code"):
                session.execute(turn.meta["setup_code"])
            g = gold.turn(t)
            names = checked_names(task, turn)
            for n, c in enumerate(x for x in tested if x.turn_id == t):
                preload = None
                if c.kind == "stale-reuse":
                    preload = {c.alias: f"{snaps / f'turn{c.revision_turn}.pkl'}::{c.variable}"}
                probe, got = dry_run(session, c.faulty_code, names, f"dry-{t}-{n}", preload)
                obs = DsevalObservation(
                    result=got.get("result") if got.get("has_result") else None,
                    namespace=got.get("namespace") or {},
                    stream=probe.stdout,
                    error=got.get("error"),
                )
                # The fault ran in a fork: kernel checks on the session would see clean state.
                clean = judge(task, turn, g.observation, g.observation, session=session)
                faulty = judge(task, turn, g.observation, obs, session=session, kernel_checks=False)
                if not clean.correct or faulty.correct:
                    effective[c.ident] = "none"
                else:
                    effective[c.ident] = "crash" if obs.error else "silent"
            session.execute(turn.reference_code or "")
    finally:
        session.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(snaps, ignore_errors=True)
    return effective


def load_or_run_gold(
    task: BenchTask, cache_dir: Path, workdir: Path, cell_timeout: float
) -> GoldTask:
    """The cached gold of ``task``, computed first when absent."""
    path = cache_dir / f"{task.task_id}.pkl"
    if path.exists():
        cached = _cached(path, GoldTask)
        if cached is not None:
            return cached
    gold = run_gold(task, workdir, cell_timeout)
    _save(path, gold)
    return gold


def load_or_plan(
    task: BenchTask,
    gold: GoldTask,
    kind: str,
    cache_dir: Path,
    workdir: Path,
    *,
    seed: int,
    max_injections: int,
    cell_timeout: float,
) -> list[PlannedFault]:
    """The cached injection plan of ``task``, computed first when absent."""
    path = cache_dir / f"{task.task_id}.{kind}.seed{seed}.max{max_injections}.pkl"
    if path.exists():
        cached = _cached(path, list)
        if cached is not None:
            return cached
    plan = plan_faults(
        task,
        gold,
        kind,
        seed=seed,
        max_injections=max_injections,
        workdir=workdir,
        cell_timeout=cell_timeout,
    )
    _save(path, plan)
    return plan


def _cached(path: Path, kind: type) -> Any:
    """A cache file this host wrote, read as plain data and our own models only; None (and
    recomputed) when it is unreadable or not what it should be."""
    try:
        value = load_value(path, own_types=True)
    except TransferError:
        return None
    return value if isinstance(value, kind) else None


def _save(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(value, fh)
    tmp.replace(path)
