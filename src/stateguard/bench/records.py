"""What a benchmark run writes into its run directory, and how a run is resumed.

Run directory layout:

* ``run.json`` — the `RunConfig` (a resumed run must use the same settings);
* ``turns.jsonl`` — one `TurnResult` per finished turn, appended as turns finish;
* ``injections.jsonl`` — one `InjectionRecord` per injected turn;
* ``errors.jsonl`` — unexpected runner errors (the task's unfinished turns are
  then recorded as skipped with the error as reason);
* ``rejections.json`` — tasks the loader rejected, with file, cell/turn and field;
* ``gold/``, ``plans/`` — per-task caches of the clean reference run and of the
  injection plan; ``manager/<task>/`` — what each task's supervisor wrote;
  ``trajectories/<task>.jsonl`` — the agent's events (``--worker llm``); ``work/`` —
  kernel working folders while tasks run;
* ``metrics.json``, ``report/`` — written by ``stateguard bench report``.

Resume rule: a task whose turns are all in ``turns.jsonl`` is finished and not run
again. Any other task is re-run from scratch (a kernel's state cannot be resumed),
and only the turns missing from ``turns.jsonl`` are appended: a turn is never
recorded twice. A line cut short by a kill is dropped when the file is reopened.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateguard.bench.metrics import TurnRecord
from stateguard.errors import StateguardError
from stateguard.verify.chain import SearchVerifier

_M = TypeVar("_M", bound=BaseModel)

RUN_FILE = "run.json"
TURNS_FILE = "turns.jsonl"
INJECTIONS_FILE = "injections.jsonl"
ERRORS_FILE = "errors.jsonl"
REJECTIONS_FILE = "rejections.json"

WorkerKind = Literal["replay", "llm"]
InjectKind = Literal[
    "stale-reuse", "dropped-constraint", "flipped-comparison", "scope-change", "join-fault"
]
INJECT_KINDS: tuple[str, ...] = (
    "stale-reuse",
    "dropped-constraint",
    "flipped-comparison",
    "scope-change",
)
_RESUME_KEYS = (
    "suite",
    "path",
    "lake",
    "worker",
    "inject",
    "manager",
    "seed",
    "max_injections",
    "judge",
    "start_index",
    "turn_limit",
    "path_maps",
    "worker_protocol",
    "search",
    "search_n",
    "verifier",
)
JudgeKind = Literal["deterministic", "llm", "hybrid"]


class RunConfig(BaseModel):
    """Settings of one benchmark run (saved as ``run.json``)."""

    model_config = ConfigDict(frozen=True)

    suite: Literal["dseval", "longds", "infiagent", "kramabench"]
    path: str
    lake: str | None = None
    """KramaBench: the data lake of the workload at ``path`` (default: found beside it)."""
    worker: WorkerKind = "replay"
    manager: str = "none"
    inject: InjectKind | None = None
    seed: int = 0
    limit: int | None = Field(default=None, ge=1)
    """Run only the first N tasks (in loader order)."""
    max_injections: int = Field(default=1, ge=1)
    """Injected turns per task at most."""
    max_repairs: int = Field(default=3, ge=0)
    """Re-runs the obedient replay worker makes after repair hints in one turn."""
    cell_timeout: float = Field(default=120.0, gt=0)
    llm_overrides: dict[str, Any] = Field(default_factory=dict)
    """Chat model settings for ``--worker llm`` and model-based managers."""
    llm_config_file: str | None = None
    max_steps_per_turn: int = Field(default=20, ge=1)
    start_index: int = Field(default=0, ge=0)
    """Skip the first N tasks (in loader order), as the LongDS runner's ``--start-index``."""
    turn_limit: int | None = Field(default=None, ge=1)
    """Keep only the first N turns of every task."""
    path_maps: list[str] = Field(default_factory=list)
    """LongDS ``PREFIX=TARGET`` rewrites of paths in reference code (see `PathMap`)."""
    worker_protocol: Literal["native", "longds"] = "native"
    """``longds``: the ``--worker llm`` agent speaks LongDS's own message protocol."""
    worker_prompt_file: str | None = None
    """System prompt of ``worker_protocol="longds"`` (default: the shipped one)."""
    judge: JudgeKind = "deterministic"
    """Text answers (LongDS): deterministic rules only; ``llm``: the LLM judge scores every
    answer (the benchmark's protocol); ``hybrid``: the LLM judge decides what the
    deterministic rules leave undecided."""
    judge_prompt_file: str | None = None
    """The LLM judge's prompt template (``{question}``, ``{ground_truth}``, ``{solution}``)."""
    judge_llm_overrides: dict[str, Any] = Field(default_factory=dict)
    """Chat model settings of the LLM judge (default: those of ``llm_overrides``)."""
    search: Literal["best-of-n", "beam", "dvts"] | None = None
    """``--worker llm`` answers each turn by test-time search (`stateguard.bench.search_run`)."""
    search_n: int = Field(default=4, ge=1)
    """Rollouts (best-of-n), candidates per step (beam) or the budget (dvts)."""
    verifier: SearchVerifier = "deterministic"
    """The step verifier that ranks the search's candidates (``deterministic>hybrid``: the
    rules rank, the hybrid's verdict breaks their ties; `stateguard.verify.chain`)."""
    kernel_python: str | None = None
    """The task kernels' Python (``--kernel-python``; None: the one running stateguard)."""


class TurnResult(TurnRecord):
    """One line of ``turns.jsonl``: a `TurnRecord` plus what explains it.

    ``flagged`` means the manager issued a repair hint during the turn; ``repaired``
    that the worker acted on one (re-ran the turn); ``first_correct`` is the verdict
    on the answer before any repair, ``correct`` the verdict on the final one.
    """

    suite: str = ""
    skipped_reason: str | None = None
    answer: str | None = None
    score: float | None = None
    judge_reason: str | None = None
    first_correct: bool | None = None
    accepted: bool = True
    """Whether the manager accepted the final answer (False when the repair budget ran out)."""
    attempts: int = 1
    repair_hints: int = 0
    injection_kind: str | None = None
    fault_effective: bool | None = None
    """For injected turns: whether the fault changed the judged result of the first answer."""
    worker_llm_calls: int = 0
    wall_time: float = 0.0
    undecided: bool = False
    """The deterministic judge could not tell (and no LLM judge decided)."""
    judged_by: str | None = None
    """``"llm"`` when the LLM judge gave the verdict."""

    def as_record(self) -> TurnRecord:
        """The plain metrics record."""
        return TurnRecord.model_validate(self.model_dump(include=set(TurnRecord.model_fields)))


class InjectionRecord(BaseModel):
    """Exactly what was corrupted, where, and whether it mattered."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    turn_id: int
    kind: str
    variable: str | None = None
    """stale-reuse: the variable whose pre-revision value the turn used."""
    alias: str | None = None
    """stale-reuse: the name holding the pre-revision copy."""
    read_version: str | None = None
    pre_version: str | None = None
    revision_turn: int | None = None
    node: dict[str, Any] | None = None
    """AST kinds: line, column, original and replacement source of the changed node."""
    after_revision: bool = True
    faulty_code: str = ""
    predicted_effective: bool | None = None
    """Whether a dry run on the clean state changed the judged result (planning)."""
    predicted_outcome: str | None = None
    """The dry run's result: "silent" (wrong, no error), "crash" or "none" (unchanged)."""
    candidates_total: int = 0
    candidates_effective: int = 0
    fault_effective: bool | None = None
    """Whether it changed the judged result of the worker's first answer in the run."""


class RunStore:
    """Reads and appends the files of one run directory (single writer: the runner)."""

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = Path(run_dir)

    @property
    def turns_path(self) -> Path:
        """``turns.jsonl``."""
        return self.run_dir / TURNS_FILE

    def prepare(self, config: RunConfig) -> None:
        """Create the run directory, or check that an existing run has the same settings."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        path = self.run_dir / RUN_FILE
        if path.exists():
            old = json.loads(path.read_text(encoding="utf-8"))
            new = config.model_dump(mode="json")
            # A key missing from an older run.json has its default value.
            defaults = _defaults()
            old = {k: old.get(k, defaults.get(k)) for k in _RESUME_KEYS}
            diff = [k for k in _RESUME_KEYS if old.get(k) != new.get(k)]
            if diff:
                raise StateguardError(
                    f"{self.run_dir} holds a run with other settings ({', '.join(diff)}: "
                    f"{[old.get(k) for k in diff]} != {[new.get(k) for k in diff]}); "
                    "use another --out or the same settings to resume"
                )
        _atomic_write(path, config.model_dump_json(indent=2))
        for name in (TURNS_FILE, INJECTIONS_FILE):
            _drop_torn_line(self.run_dir / name)

    def config(self) -> RunConfig:
        """The saved settings; `StateguardError` when this is not a run directory."""
        path = self.run_dir / RUN_FILE
        if not path.exists():
            raise StateguardError(
                f"{self.run_dir} is not a benchmark run directory (no {RUN_FILE})"
            )
        return RunConfig.model_validate_json(path.read_text(encoding="utf-8"))

    def results(self) -> list[TurnResult]:
        """Every recorded turn, first record kept per ``(task, turn)``."""
        seen: dict[tuple[str, int], TurnResult] = {}
        for r in _valid(TurnResult, _read_jsonl(self.turns_path), self.turns_path):
            seen.setdefault((r.task_id, r.turn_id), r)
        return list(seen.values())

    def records(self) -> list[TurnRecord]:
        """The metrics records of every recorded turn."""
        return [r.as_record() for r in self.results()]

    def done_turns(self) -> dict[str, set[int]]:
        """Recorded turn ids per task."""
        out: dict[str, set[int]] = {}
        for r in self.results():
            out.setdefault(r.task_id, set()).add(r.turn_id)
        return out

    def injections(self) -> list[InjectionRecord]:
        """Every injection, one per ``(task, turn)``."""
        seen: dict[tuple[str, int], InjectionRecord] = {}
        path = self.run_dir / INJECTIONS_FILE
        for rec in _valid(InjectionRecord, _read_jsonl(path), path):
            seen.setdefault((rec.task_id, rec.turn_id), rec)
        return list(seen.values())

    def append_turn(self, result: TurnResult) -> bool:
        """Append a turn unless it is already recorded; returns whether it was written."""
        return self._append_unique(TURNS_FILE, result, (result.task_id, result.turn_id))

    def rewrite_turns(self, results: Iterable[TurnResult]) -> None:
        """Replace ``turns.jsonl`` (a re-judged run); each turn must appear once."""
        lines = [r.model_dump_json() for r in results]
        _atomic_write(self.turns_path, "".join(line + "\n" for line in lines))

    def append_injection(self, record: InjectionRecord) -> bool:
        """Append an injection unless one is recorded for that turn."""
        return self._append_unique(INJECTIONS_FILE, record, (record.task_id, record.turn_id))

    def write_rejections(self, rejections: Iterable[BaseModel]) -> None:
        """Record the tasks the loader rejected (replacing an earlier record)."""
        items = [r.model_dump(mode="json") for r in rejections]
        _atomic_write(self.run_dir / REJECTIONS_FILE, json.dumps(items, indent=2))

    def rejections(self) -> list[dict[str, Any]]:
        """The recorded rejections (``task_id``, ``source``, ``reason``)."""
        path = self.run_dir / REJECTIONS_FILE
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []

    def errors(self) -> list[dict[str, Any]]:
        """Runner errors, one per failed task run (``task_id``, ``error`` traceback)."""
        return list(_read_jsonl(self.run_dir / ERRORS_FILE))

    def append_error(self, task_id: str, error: str) -> None:
        """Log an unexpected runner error."""
        _append_line(self.run_dir / ERRORS_FILE, json.dumps({"task_id": task_id, "error": error}))

    def _append_unique(self, name: str, model: BaseModel, key: tuple[str, int]) -> bool:
        path = self.run_dir / name
        keys = {(o.get("task_id"), o.get("turn_id")) for o in _read_jsonl(path)}
        if key in keys:
            return False
        _append_line(path, model.model_dump_json())
        return True


def _defaults() -> dict[str, Any]:
    fields = RunConfig.model_fields
    return {k: fields[k].get_default(call_default_factory=True) for k in _RESUME_KEYS}


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    """The JSON objects of a record file; a line that is not UTF-8, not JSON or not an
    object is skipped with a warning naming the file and line (the last line may just be
    torn by a kill: `_drop_torn_line` removes that one on reopen)."""
    if not path.exists():
        return []
    out = []
    lines = path.read_bytes().split(b"\n")
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            if n < len(lines):  # not a torn last line
                _warn_corrupt(path, n, f"{type(exc).__name__}")
            continue
        if isinstance(obj, dict):
            out.append(obj)
        else:
            _warn_corrupt(path, n, "not a JSON object")
    return out


def _warn_corrupt(path: Path, line: int, why: str) -> None:
    warnings.warn(f"{path}:{line}: corrupt record line skipped ({why})", stacklevel=3)


def _valid(model: type[_M], objs: Iterable[dict[str, Any]], path: Path) -> Iterable[_M]:
    """Records that match their schema; the others are skipped with a warning."""
    for obj in objs:
        try:
            yield model.model_validate(obj)
        except ValidationError as exc:
            key = f"{obj.get('task_id')!r} turn {obj.get('turn_id')!r}"
            warnings.warn(
                f"{path}: record {key} skipped: {exc.error_count()} schema error(s)",
                stacklevel=3,
            )


def _drop_torn_line(path: Path) -> None:
    """Remove a trailing partial line (no newline, or not JSON) left by a killed writer."""
    if not path.exists():
        return
    data = path.read_bytes()
    if not data:
        return
    lines = data.split(b"\n")
    tail = lines[-1]
    keep = lines[:-1]
    if tail.strip():
        try:
            json.loads(tail)
            keep.append(tail)
        except json.JSONDecodeError:
            pass
    text = b"\n".join(x for x in keep if x.strip())
    _atomic_write(path, (text + b"\n").decode("utf-8") if text else "")


def _append_line(path: Path, line: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
