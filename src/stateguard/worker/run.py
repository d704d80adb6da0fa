"""Run a task end to end and write its run directory.

Run directory layout (paths relative to ``run_dir``):

* ``trajectory.jsonl`` — every `TrajectoryEvent`, appended and flushed as it happens;
* ``answers.json`` — the `RunSummary` (see `stateguard.worker.summary`; per turn:
  question, answer, gold, correct, steps, hints, repairs, wall time, tokens,
  manager LLM calls), rewritten after every turn;
* ``analysis.ipynb`` — every executed cell with its outputs, rewritten after every turn;
* ``states.sqlite`` and ``manager_events.jsonl`` — the guarded session's store and
  event sink;
* ``run.json`` and ``model_calls.jsonl`` — what the run was started with and every
  model call, so that ``stateguard run --resume`` can continue it after a crash
  (see `stateguard.worker.resume`; ``previous/`` and ``resumes.jsonl`` appear then);
* ``workdir/`` — the kernel's working directory (``workdir/data`` is the read-only data);
* ``report.html`` — written by the ``report`` callable the caller passes (the CLI passes
  ``stateguard.report.write_report``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from stateguard.errors import StateguardError
from stateguard.guard import GuardedSession, JsonlEventSink
from stateguard.kernel import Confinement, KernelSession, ResourceLimits, SandboxPolicy
from stateguard.kernel.env import scrub
from stateguard.llm import ChatModel
from stateguard.manager import SUPERVISOR_KINDS
from stateguard.worker.events import AnswerRecorded, StepRecord, TrajectoryEvent, dump_event
from stateguard.worker.grading import grade
from stateguard.worker.loop import Worker
from stateguard.worker.notebook import write_notebook
from stateguard.worker.preload import Preload, plan_preload
from stateguard.worker.resume import (
    TAPE,
    ModelTape,
    ReplayClock,
    ResumeError,
    ResumePlan,
    ResumeRecord,
    RunManifest,
    check_manifest,
    compare_turn,
    log_resume,
    prepare_resume,
    read_manifest,
    task_digest,
    write_manifest,
)
from stateguard.worker.summary import RunSummary, TurnOutcome, TurnTally
from stateguard.worker.tasks import Task

MANAGER_KINDS = ("none", "deterministic", "llm", "hybrid")
SHOW_EVERY_EXPRESSION = "get_ipython().ast_node_interactivity = 'all'"
"""Kernel startup: a cell shows the value of each of its top-level expressions, not only
the last one (IPython's own setting). A model writes ``df.groupby('g').x.sum().idxmax()``
on one line and another expression below it, and reads only the output: in a notebook's
default the first value is computed and never shown."""
_LISTED_FILES = 30
_PREVIEWED_FILES = 5
_PREVIEW_ROWS = 3
_PREVIEW_SAMPLE = 1000

__all__ = [
    "MANAGER_KINDS",
    "RunSession",
    "RunSummary",
    "TurnOutcome",
    "check_manager",
    "describe_data",
    "manager_kinds",
    "run_task",
]

ReportWriter = Callable[[Path], Path | str | None]
"""Writes the report of a finished run directory; returns its path."""


def manager_kinds() -> tuple[str, ...]:
    """The manager kinds a run accepts."""
    return tuple(dict.fromkeys([*MANAGER_KINDS, *SUPERVISOR_KINDS]))


def check_manager(kind: str) -> None:
    """Raise `StateguardError` unless ``kind`` names a manager."""
    kinds = manager_kinds()
    if kind not in kinds:
        raise StateguardError(f"unknown manager {kind!r}; choose one of {', '.join(kinds)}")


def _table_preview(path: Path) -> str:
    """Columns with their dtypes and the first rows of a CSV/TSV file, or "" if unreadable.

    Read by pandas as the kernel would read it with default options, so the names and
    types are the ones the model will see (first `_PREVIEW_SAMPLE` rows for the dtypes).
    """
    import pandas as pd

    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        frame = pd.read_csv(path, sep=sep, nrows=_PREVIEW_SAMPLE)
    except Exception:  # a preview is a courtesy: a file pandas cannot read keeps its header
        return ""
    columns = ", ".join(f"{c} ({t})" for c, t in frame.dtypes.astype(str).items())
    rows = frame.head(_PREVIEW_ROWS).to_string(index=False, max_colwidth=30)
    return f"  columns (dtype): {columns[:1500]}\n  first rows:\n" + "\n".join(
        "    " + r for r in rows.splitlines()
    )


def describe_data(data_dir: Path | None, preload: Preload | None = None) -> str:
    """The data listing shown in the system prompt.

    Every file with its size; the first `_PREVIEWED_FILES` CSV/TSV files also with
    their columns, dtypes and first rows (grounding: the model sees the real names),
    the others with their header line.
    """
    if data_dir is None:
        return ""
    files = sorted(p for p in data_dir.rglob("*") if p.is_file())
    if not files:
        return "The data directory is empty."
    lines = ["Files:"]
    previewed = 0
    for p in files[:_LISTED_FILES]:
        rel = p.relative_to(data_dir).as_posix()
        line = f"- data/{rel} ({p.stat().st_size / 1024:.1f} KB)"
        if preload is not None and (loaded := preload.listing_note(f"data/{rel}")):
            line += "\n" + loaded
        if p.suffix.lower() in (".csv", ".tsv"):
            preview = _table_preview(p) if previewed < _PREVIEWED_FILES else ""
            if preview:
                previewed += 1
                line += "\n" + preview
            else:
                with (
                    contextlib.suppress(OSError, UnicodeDecodeError),
                    open(p, encoding="utf-8") as fh,
                ):
                    header = fh.readline().strip()
                    if header:
                        line += f", header: {header[:300]}"
        lines.append(line)
    if len(files) > _LISTED_FILES:
        lines.append(f"- … and {len(files) - _LISTED_FILES} more files")
    return "\n".join(lines)


def _stage_data(task: Task, scratch: Path) -> Path | None:
    """The directory the kernel sees as ``data/``: a lone directory as is, else a copy."""
    if not task.data:
        return None
    if len(task.data) == 1 and task.data[0].is_dir():
        return task.data[0]
    staged = scratch / "data"
    staged.mkdir(parents=True)
    for entry in task.data:
        if entry.is_dir():
            shutil.copytree(entry, staged / entry.name)
        else:
            shutil.copy2(entry, staged / entry.name)
    return staged


def _write_report(writer: ReportWriter | None, run_dir: Path) -> Path | None:
    if writer is None:
        return None
    result = writer(run_dir)
    path = Path(result) if isinstance(result, str | Path) else run_dir / "report.html"
    return path if path.exists() else None


class RunSession:
    """One kernel, one supervisor and one worker for a task, writing the run directory.

    Use as a context manager; `run_turn` may be called any number of times
    (the interactive chat asks turn by turn). Closing writes ``answers.json``,
    ``analysis.ipynb`` and the report and stops the kernel, also after an error.
    """

    def __init__(
        self,
        task: Task,
        model: ChatModel,
        run_dir: Path,
        *,
        manager: str = "none",
        manager_model: ChatModel | None = None,
        max_steps_per_turn: int = 12,
        turn_seconds: float | None = None,
        turn_tokens: int | None = 4000,
        call_seconds: float | None = 900.0,
        no_progress_limit: int = 4,
        repeat_limit: int = 2,
        retry_samples: int = 2,
        cell_timeout: float = 120,
        observation_chars: int = 4000,
        context_chars: int = 16_000,
        max_tokens: int | None = 512,
        limits: ResourceLimits = ResourceLimits(),
        report: ReportWriter | None = None,
        resume: bool = False,
        origin: dict[str, Any] | None = None,
    ) -> None:
        """Prepare (nothing starts before `start`); ``manager_model`` defaults to ``model``.

        ``report`` writes ``report.html`` when the run closes (none without it).
        ``resume`` continues the run already in ``run_dir`` (see `stateguard.worker.resume`):
        `start` replays its finished turns, and `turns_done` says how many there were.
        ``origin`` is recorded in ``run.json`` as how the run was started.
        """
        check_manager(manager)
        self.task = task
        self.model = model
        self.run_dir = Path(run_dir).resolve()
        self.manager = manager
        self.manager_model = manager_model or model
        self.worker_options: dict[str, Any] = {
            "max_steps_per_turn": max_steps_per_turn,
            "turn_seconds": turn_seconds,
            "turn_tokens": turn_tokens,
            "call_seconds": call_seconds,
            "no_progress_limit": no_progress_limit,
            "repeat_limit": repeat_limit,
            "retry_samples": retry_samples,
            "cell_timeout": cell_timeout,
            "observation_chars": observation_chars,
            "context_chars": context_chars,
            "max_tokens": max_tokens,
        }
        self.limits = limits
        self.report_writer = report
        self.resume = resume
        self.origin = dict(origin or {})
        self.resumed: ResumeRecord | None = None
        """What the resume did (set by `start` when ``resume``)."""
        self._tape: ModelTape | None = None
        self.events: list[TrajectoryEvent] = []
        self.outcomes: list[TurnOutcome] = []
        self.report: Path | None = None
        self.error: str | None = None
        self.confinement: Confinement | None = None
        self._started = time.monotonic()
        self._ended: float | None = None
        self._scratch: Path | None = None
        self._guard: GuardedSession | None = None
        self._worker: Worker | None = None
        self._trajectory: Any = None

    @property
    def trajectory_path(self) -> Path:
        """``run_dir/trajectory.jsonl``."""
        return self.run_dir / "trajectory.jsonl"

    def manifest(self) -> RunManifest:
        """What this run is started with (``run.json``)."""
        return RunManifest(
            task=self.task.name,
            task_digest=task_digest(self.task),
            manager=self.manager,
            model=self.model.name,
            manager_model=self.manager_model.name,
            options=dict(self.worker_options),
            origin=self.origin,
        )

    @property
    def turns_done(self) -> int:
        """Turns finished so far (after a resume: the replayed ones included)."""
        return len(self.outcomes)

    def start(self) -> None:
        """Create the run directory, stage the data, start the kernel and the supervisor.

        With ``resume``, check ``run.json``, move the previous attempt aside and replay
        the finished turns (`ResumeError` when the run cannot be resumed).
        """
        plan: ResumePlan | None = None
        manifest = self.manifest()
        if self.resume:
            check_manifest(read_manifest(self.run_dir), manifest, self.run_dir)
            plan = prepare_resume(self.run_dir)
        elif self.trajectory_path.exists():
            raise StateguardError(
                f"{self.run_dir} already holds a run (trajectory.jsonl); choose another "
                "directory, or continue it with --resume"
            )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if plan is None:
            write_manifest(self.run_dir, manifest)
        self._tape = ModelTape(self.run_dir / TAPE, plan.tape if plan else ())
        model = self._tape.wrap(self.model, "worker")
        manager_model = self._tape.wrap(self.manager_model, "manager")
        self._scratch = Path(tempfile.mkdtemp(prefix="stateguard-task-"))
        data_dir = _stage_data(self.task, self._scratch)
        kernel = KernelSession(
            workdir=self.run_dir / "workdir",
            data_dir=data_dir,
            limits=self.limits,
            default_timeout=self.worker_options["cell_timeout"],
            sandbox=SandboxPolicy.from_env().model_copy(update={"network": self.task.network}),
            startup_code=SHOW_EVERY_EXPRESSION,
        )
        self.confinement = kernel.confinement
        self._guard = GuardedSession(
            kernel,
            manager=self.manager,
            model=manager_model,
            run_dir=self.run_dir,
            sinks=[JsonlEventSink(self.run_dir / "manager_events.jsonl")],
        )
        self._trajectory = open(self.trajectory_path, "a", encoding="utf-8")  # noqa: SIM115
        self._guard.start()
        setup = plan_preload(data_dir)
        self._worker = Worker(
            model,
            self._guard,
            data_files=describe_data(data_dir, setup),
            setup=setup,
            **self.worker_options,
        )
        self._started = time.monotonic()
        if plan is not None:
            self._replay(plan)

    def _replay(self, plan: ResumePlan) -> None:
        """Run the finished turns again on the recorded model calls; keep their records."""
        assert self._worker is not None and self._tape is not None
        tape, worker = self._tape, self._worker
        started = time.perf_counter()
        cells = 0
        divergences: list[str] = []
        for finished in plan.turns:
            if finished.turn > len(self.task.turns):
                raise ResumeError(
                    f"{self.trajectory_path}: turn {finished.turn} is recorded, but the task "
                    f"has {len(self.task.turns)} turns"
                )
            turn = self.task.turns[finished.turn - 1]
            calls = sum(1 for e in plan.tape if e.role == "worker" and e.turn == finished.turn)
            tape.turn = finished.turn
            worker.clock = ReplayClock(tape, finished.turn, finished.answer.ended, calls)
            replayed = list(worker.run_turn(finished.turn, turn.question, turn.context))
            if tape.left(finished.turn):
                raise ResumeError(
                    f"{self.run_dir / TAPE}: the replay of turn {finished.turn} ended with "
                    f"{tape.left(finished.turn)} recorded model call(s) unused: the run does "
                    "not replay the same way (a cell's result changed); start a new run"
                )
            divergences += compare_turn(finished, replayed)
            cells += sum(1 for e in replayed if isinstance(e, StepRecord) and e.execution)
            tally = TurnTally()
            for event in finished.events:  # the recorded events, as an uninterrupted run has them
                if isinstance(event, AnswerRecorded):
                    self.outcomes.append(
                        tally.outcome(
                            turn.question,
                            turn.context,
                            event,
                            grade(event.answer, turn.answer, turn.tolerance),
                        )
                    )
                tally.add(event)
                self.events.append(event)
        worker.clock = time.monotonic
        tape.replaying = False
        assert self._guard is not None
        self._guard.drain_events()
        self.resumed = ResumeRecord(
            replayed_turns=len(plan.turns),
            replayed_cells=cells,
            replay_seconds=round(time.perf_counter() - started, 3),
            dropped_events=plan.dropped_events,
            divergences=divergences + tape.divergences,
            previous=plan.previous,
        )
        log_resume(self.run_dir, self.resumed)

    def _record(self, event: TrajectoryEvent) -> None:
        self.events.append(event)
        self._trajectory.write(dump_event(event) + "\n")
        self._trajectory.flush()

    def run_turn(
        self,
        question: str,
        context: str = "",
        gold: Any = None,
        tolerance: float | None = None,
    ) -> Iterator[TrajectoryEvent]:
        """Run the next turn (numbered from 1); yields each event after recording it."""
        if self._worker is None:
            raise StateguardError("RunSession.run_turn called before start()")
        number = len(self.outcomes) + 1
        if self._tape is not None:
            self._tape.turn = number
        tally = TurnTally()
        for event in self._worker.run_turn(number, question, context):
            if isinstance(event, AnswerRecorded):
                verdict = grade(event.answer, gold, tolerance)
                event = event.model_copy(update={"gold": gold, "correct": verdict.correct})
                self.outcomes.append(tally.outcome(question, context, event, verdict))
            tally.add(event)
            self._record(event)
            yield event
            if isinstance(event, AnswerRecorded):
                self._write_outputs()

    def summary(self) -> RunSummary:
        """The run so far."""
        return RunSummary(
            task=self.task.name,
            manager=self.manager,
            model=self.model.name,
            run_dir=self.run_dir,
            turns=tuple(self.outcomes),
            wall_time=(self._ended or time.monotonic()) - self._started,
            report=self.report,
            error=self.error,
            confinement=self.confinement,
        )

    def _write_outputs(self) -> None:
        answers = self.run_dir / "answers.json"
        tmp = answers.with_suffix(".json.tmp")
        tmp.write_text(scrub(self.summary().model_dump_json(indent=2)), encoding="utf-8")
        tmp.replace(answers)
        write_notebook(self.events, self.run_dir / "analysis.ipynb", title=self.task.name)

    def close(self) -> RunSummary:
        """Write the outputs and the report, stop the kernel, remove scratch files."""
        if self._ended is None:
            self._ended = time.monotonic()
        try:
            if self._trajectory is not None:
                self._trajectory.close()
                self._trajectory = None
                self._write_outputs()
                self.report = _write_report(self.report_writer, self.run_dir)
                self._write_outputs()
        finally:
            if self._guard is not None:
                self._guard.close()
                self._guard = None
            if self._tape is not None:
                self._tape.close()
                self._tape = None
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None
            link = self.run_dir / "workdir" / "data"
            if link.is_symlink() and not link.exists():
                link.unlink()  # it pointed at the removed staged copy
        return self.summary()

    def __enter__(self) -> RunSession:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            self.error = f"{type(exc).__name__}: {exc}"
        self.close()


def run_task(
    task: Task,
    model: ChatModel,
    supervisor_kind: str,
    run_dir: Path,
    *,
    on_event: Callable[[TrajectoryEvent], None] | None = None,
    **options: Any,
) -> RunSummary:
    """Run every turn of ``task`` and write ``run_dir``; ``options`` go to `RunSession`."""
    with RunSession(task, model, run_dir, manager=supervisor_kind, **options) as run:
        for turn in task.turns:
            for event in run.run_turn(turn.question, turn.context, turn.answer, turn.tolerance):
                if on_event is not None:
                    on_event(event)
    return run.summary()
