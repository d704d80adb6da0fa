"""Resuming a run directory after a crash or a kill (``stateguard run --resume RUN_DIR``).

What a run directory records so that a resume is exact:

* ``run.json`` — the `RunManifest`: the task's digest (questions, gold, data content),
  the manager, the worker's options and the model names. A resume with another task
  or configuration is refused (`ResumeError`, naming the fields that differ).
* ``model_calls.jsonl`` — every chat-model call of the worker and of the manager
  (`TapeEntry`: role, turn, a digest of the prompt, the full response), appended and
  flushed as it returns. The model is the only input of a run that cannot be
  recomputed.
* ``trajectory.jsonl`` — the events, flushed as they happen; a turn is *finished*
  when its `AnswerRecorded` is on disk (an interrupted turn is not finished).

A resume keeps the trajectory lines of the finished turns verbatim and rebuilds
everything else by replay: a fresh kernel, lineage graph, manager and state store
run the finished turns again with the same worker loop, the model calls answered
from ``model_calls.jsonl`` (in order, per role and turn) and the worker's turn
clock reproducing where the time budget ended a turn. Every cell of the finished
turns runs again in the new kernel, so the kernel's namespace, the lineage and the
state store (``states.sqlite``, ``manager_events.jsonl``) come out as the run had
them. The replayed events are checked against the recorded ones; a difference
(a cell whose output changed, a prompt that differs) is reported as a divergence,
and a replay that asks for more or fewer model calls than were recorded is refused.

A half-finished turn is redone from its start: its trajectory lines and model calls
are dropped (nothing is duplicated). Nothing is deleted either: the files of the
previous attempt (trajectory, model calls, store, events, outputs, the kernel's
``workdir``) are moved to ``previous/N/`` first. Each resume appends a `ResumeRecord`
(replayed turns and cells, replay seconds, divergences) to ``resumes.jsonl``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from stateguard.errors import StateguardError
from stateguard.kernel.env import scrub
from stateguard.llm import ChatModel
from stateguard.llm.limits import ReplyCut
from stateguard.llm.messages import ChatMessage, ChatResponse
from stateguard.worker.events import (
    AnswerRecorded,
    StepRecord,
    TrajectoryEvent,
    TurnStarted,
)
from stateguard.worker.tasks import Task

MANIFEST = "run.json"
TAPE = "model_calls.jsonl"
TRAJECTORY = "trajectory.jsonl"
RESUMES = "resumes.jsonl"
PREVIOUS = "previous"
FORMAT = 1
# Rebuilt by the replay, so moved aside before it (the trajectory and tape are rewritten).
_REBUILT = (
    "states.sqlite",
    "states.sqlite-wal",
    "states.sqlite-shm",
    "states.sqlite-journal",
    "manager_events.jsonl",
    "answers.json",
    "analysis.ipynb",
    "report.html",
    "workdir",
)

Role = Literal["worker", "manager"]
_EVENT: TypeAdapter[TrajectoryEvent] = TypeAdapter(TrajectoryEvent)


class ResumeError(StateguardError):
    """A run directory cannot be resumed (another task or config, missing or corrupt records)."""


# ---------------------------------------------------------------------- manifest
def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def task_digest(task: Task) -> str:
    """A digest of what decides a run's results: turns, gold, network and the data's content."""
    h = hashlib.sha256()
    h.update(task.model_dump_json(include={"name", "turns", "network"}).encode())
    for root in task.data:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for p in files:
            rel = p.relative_to(root.parent).as_posix()
            h.update(f"\0{rel}\0{_file_digest(p)}".encode())
    return h.hexdigest()


class RunManifest(BaseModel):
    """``run.json``: what a run was started with (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int = FORMAT
    task: str
    task_digest: str
    manager: str
    model: str
    manager_model: str
    options: dict[str, Any] = Field(default_factory=dict)
    """The worker's options (steps, time budget, cell timeout, prompt budget, …)."""
    origin: dict[str, Any] = Field(default_factory=dict)
    """How the run was started (the CLI records its task path and flags); not compared."""

    def differences(self, other: RunManifest) -> list[str]:
        """Fields (``options.NAME`` for options) whose values differ from ``other``."""
        out = [
            name
            for name in ("format", "task", "task_digest", "manager", "model", "manager_model")
            if getattr(self, name) != getattr(other, name)
        ]
        for key in sorted(set(self.options) | set(other.options)):
            if self.options.get(key) != other.options.get(key):
                out.append(f"options.{key}")
        return out


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    """Write ``run.json`` atomically."""
    path = run_dir / MANIFEST
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)


def read_manifest(run_dir: Path) -> RunManifest:
    """The ``run.json`` of ``run_dir``; `ResumeError` naming the file when missing or invalid."""
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        raise ResumeError(
            f"{path}: no such file; {run_dir} is not a run directory that can be resumed"
        )
    try:
        return RunManifest.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as exc:
        raise ResumeError(f"{path}: not a valid run manifest: {exc}") from None


def check_manifest(recorded: RunManifest, current: RunManifest, run_dir: Path) -> None:
    """Refuse a resume whose task or configuration differs from the recorded one."""
    diff = recorded.differences(current)
    if not diff:
        return
    details = []
    for name in diff:
        if name.startswith("options."):
            key = name.split(".", 1)[1]
            was, now = recorded.options.get(key), current.options.get(key)
        else:
            was, now = getattr(recorded, name), getattr(current, name)
        if name == "task_digest":
            details.append("task_digest: the task's turns, gold or data changed")
        else:
            details.append(f"{name}: recorded {was!r}, now {now!r}")
    raise ResumeError(
        f"{run_dir / MANIFEST}: this run was started with another task or configuration "
        f"({'; '.join(details)}); resume it with the same ones, or start a new run"
    )


# ------------------------------------------------------------------------- tape
def prompt_digest(messages: Sequence[ChatMessage], **options: Any) -> str:
    """A digest of one model call's prompt and sampling options."""
    payload = {"messages": [m.model_dump() for m in messages], **options}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class TapeEntry(BaseModel):
    """One line of ``model_calls.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    turn: int
    """The run's turn when the call was made (0: before the first turn)."""
    call: int
    """Index of the call within this role and turn."""
    prompt: str
    """`prompt_digest` of the call."""
    response: ChatResponse


class ModelTape:
    """Records every model call of a run and, while replaying, answers from the record."""

    def __init__(self, path: Path, recorded: Iterable[TapeEntry] = ()) -> None:
        self.path = path
        self.turn = 0
        self._queue: dict[tuple[str, int], list[TapeEntry]] = {}
        for entry in recorded:
            self._queue.setdefault((entry.role, entry.turn), []).append(entry)
        self.replaying = bool(self._queue)
        self._served: dict[tuple[str, int], int] = {}
        self.divergences: list[str] = []
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def wrap(self, model: ChatModel, role: Role) -> TapedModel:
        """``model`` with its calls recorded (and replayed) under ``role``."""
        return TapedModel(model, role, self)

    def served(self, role: Role, turn: int) -> int:
        """Calls answered so far for ``role`` in ``turn``."""
        return self._served.get((role, turn), 0)

    def left(self, turn: int) -> int:
        """Recorded calls of ``turn`` not replayed (any role)."""
        return sum(len(q) for (_, t), q in self._queue.items() if t == turn)

    def call(
        self,
        role: Role,
        model: ChatModel,
        messages: Sequence[ChatMessage],
        options: dict,
        bounds: dict | None = None,
    ) -> ChatResponse:
        """Answer one call: from the record while replaying, else from ``model`` (recorded).

        ``bounds`` (the call's wall-clock and reply bounds) go to the model but not into
        the prompt's digest: they limit the reply, they do not change the prompt."""
        key = (role, self.turn)
        index = self._served.get(key, 0)
        digest = prompt_digest(messages, **options)
        if self.replaying:
            queue = self._queue.get(key)
            if not queue:
                raise ResumeError(
                    f"{self.path}: the replay of turn {self.turn} asked the {role} model for "
                    f"call {index + 1}, but the recorded turn made {index}: the run does not "
                    "replay the same way (a cell's result changed); start a new run"
                )
            entry = queue.pop(0)
            if entry.prompt != digest:
                self.divergences.append(
                    f"turn {self.turn}: the {role} model's prompt of call {index + 1} differs "
                    "from the recorded one (the recorded reply was used)"
                )
            self._served[key] = index + 1
            return entry.response
        response = model.complete(messages, **options, **(bounds or {}))
        entry = TapeEntry(role=role, turn=self.turn, call=index, prompt=digest, response=response)
        self._fh.write(scrub(entry.model_dump_json()) + "\n")
        self._fh.flush()
        self._served[key] = index + 1
        return response

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


def _parameters(model: ChatModel) -> set[str]:
    """The keyword names ``model.complete`` declares (empty when it cannot be read)."""
    try:
        return set(inspect.signature(model.complete).parameters)
    except (TypeError, ValueError):
        return set()


class TapedModel:
    """A `ChatModel` whose calls go through a `ModelTape`; other attributes are the model's."""

    def __init__(self, model: ChatModel, role: Role, tape: ModelTape) -> None:
        self.inner = model
        self.role: Role = role
        self.tape = tape
        self.name = model.name

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        json_schema: dict | None = None,
        grammar: str | None = None,
        seconds: float | None = None,
        cut: ReplyCut | None = None,
    ) -> ChatResponse:
        """The reply to ``messages`` (recorded, or replayed from the record); ``grammar``
        is passed on to a model that takes one (``supports_grammar``), ``seconds`` and
        ``cut`` (the call's bounds) to a model whose ``complete`` names them."""
        options: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if stop is not None:
            options["stop"] = list(stop)
        if json_schema is not None:
            options["json_schema"] = json_schema
        if grammar is not None and getattr(self.inner, "supports_grammar", False):
            options["grammar"] = grammar
        bounds: dict[str, Any] = {}
        params = _parameters(self.inner)
        if seconds is not None and "seconds" in params:
            bounds["seconds"] = seconds
        if cut is not None and "cut" in params:
            bounds["cut"] = cut
        return self.tape.call(self.role, self.inner, messages, options, bounds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ReplayClock:
    """The worker's clock during a replayed turn: time stands still, so no budget runs out,
    except that a turn the time budget ended runs out right after its last recorded call."""

    def __init__(self, tape: ModelTape, turn: int, ended: str, calls: int) -> None:
        self.tape, self.turn, self.ended, self.calls = tape, turn, ended, calls
        self.frozen = time.monotonic()

    def __call__(self) -> float:
        if self.ended == "time" and self.tape.served("worker", self.turn) >= self.calls:
            return math.inf
        return self.frozen


# ------------------------------------------------------------------- the record
class FinishedTurn(BaseModel):
    """The recorded events of one finished turn."""

    model_config = ConfigDict(frozen=True)

    turn: int
    events: tuple[TrajectoryEvent, ...]

    @property
    def answer(self) -> AnswerRecorded:
        """The turn's final event."""
        last = self.events[-1]
        assert isinstance(last, AnswerRecorded)
        return last


class ResumePlan(BaseModel):
    """What a resume starts from: the finished turns and the model calls to replay."""

    model_config = ConfigDict(frozen=True)

    turns: tuple[FinishedTurn, ...] = ()
    tape: tuple[TapeEntry, ...] = ()
    previous: Path
    """Where the files of the previous attempt were moved."""
    dropped_events: int = 0
    """Trajectory events of the half-finished turn (redone)."""


def _finished_turns(path: Path) -> tuple[list[FinishedTurn], list[str], int]:
    """Finished turns 1..k, their raw lines, and how many later events are dropped."""
    turns: list[FinishedTurn] = []
    kept: list[str] = []
    current: list[TrajectoryEvent] = []
    current_lines: list[str] = []
    pending = 0
    if not path.exists():
        return turns, kept, 0
    raw = path.read_bytes().split(b"\n")
    for number, line in enumerate(raw, 1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
            event = _EVENT.validate_python(json.loads(text))
        except (UnicodeDecodeError, ValueError, ValidationError) as exc:
            if any(r.strip() for r in raw[number:]):
                raise ResumeError(
                    f"{path}:{number}: not a trajectory event ({type(exc).__name__}) and not "
                    "the last line; the record is damaged and the run cannot be resumed"
                ) from None
            break  # a line torn by the kill: the turn it belongs to is redone
        if isinstance(event, TurnStarted) and event.turn != len(turns) + 1:
            raise ResumeError(f"{path}:{number}: turn {event.turn} follows turn {len(turns)}")
        current.append(event)
        current_lines.append(text)
        if isinstance(event, AnswerRecorded):
            if event.ended == "interrupt":  # interrupted: redone like a half-finished turn
                break
            turns.append(FinishedTurn(turn=event.turn, events=tuple(current)))
            kept += current_lines
            current, current_lines = [], []
    pending = sum(1 for r in raw if r.strip()) - len(kept)
    return turns, kept, pending


def _read_tape(path: Path, finished: int) -> list[TapeEntry]:
    entries: list[TapeEntry] = []
    if not path.exists():
        return entries
    raw = path.read_bytes().split(b"\n")
    for number, line in enumerate(raw, 1):
        if not line.strip():
            continue
        try:
            entry = TapeEntry.model_validate_json(line)
        except ValidationError:
            if any(r.strip() for r in raw[number:]):
                raise ResumeError(
                    f"{path}:{number}: not a recorded model call, and not the last line; "
                    "the record is damaged and the run cannot be resumed"
                ) from None
            break
        if entry.turn <= finished:
            entries.append(entry)
    return entries


def keep_turns(
    trajectory: Path, tape: Path, turns: set[int], quarantine: Path
) -> tuple[list[TapeEntry], list[str]]:
    """Keep only the records of ``turns`` (finished elsewhere, e.g. in a benchmark's turns file).

    ``trajectory`` and ``tape`` are rewritten with the lines of those turns (and the
    model calls made before the first turn); every other line — a half-finished turn,
    a torn or corrupt line — is appended to ``quarantine``. Returns the kept model
    calls and a warning per corrupt line.
    """
    warnings: list[str] = []
    moved: list[str] = []
    entries: list[TapeEntry] = []
    for path, is_tape in ((trajectory, False), (tape, True)):
        kept: list[str] = []
        raw = path.read_bytes().split(b"\n") if path.exists() else []
        for number, line in enumerate(raw, 1):
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
                data = json.loads(text)
                if is_tape:
                    entry = TapeEntry.model_validate(data)
                    turn = entry.turn
                else:
                    turn = _EVENT.validate_python(data).turn
            except (UnicodeDecodeError, ValueError, ValidationError) as exc:
                if any(r.strip() for r in raw[number:]):  # a torn last line is expected
                    warnings.append(f"{path}:{number}: corrupt record line quarantined ({exc})")
                moved.append(line.decode("utf-8", errors="replace"))
                continue
            if turn in turns or (is_tape and turn == 0 and turns):
                kept.append(text)
                if is_tape:
                    entries.append(entry)
            else:
                moved.append(text)
        if path.exists():
            path.write_text("".join(k + "\n" for k in kept), encoding="utf-8")
    if moved:
        with open(quarantine, "a", encoding="utf-8") as fh:
            fh.write("".join(m + "\n" for m in moved))
    return entries, warnings


def prepare_resume(run_dir: Path) -> ResumePlan:
    """Read the record of ``run_dir``, move the previous attempt aside, keep the finished part.

    Afterwards ``trajectory.jsonl`` and ``model_calls.jsonl`` hold only the finished
    turns; everything the replay rebuilds is under ``previous/N/``.
    """
    trajectory = run_dir / TRAJECTORY
    turns, kept, dropped = _finished_turns(trajectory)
    tape = _read_tape(run_dir / TAPE, len(turns))
    root = run_dir / PREVIOUS
    n = 1
    while (root / str(n)).exists():
        n += 1
    previous = root / str(n)
    previous.mkdir(parents=True)
    for name in (TRAJECTORY, TAPE, *_REBUILT):
        src = run_dir / name
        if src.exists() or src.is_symlink():
            shutil.move(str(src), str(previous / name))
    trajectory.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    (run_dir / TAPE).write_text("".join(e.model_dump_json() + "\n" for e in tape), encoding="utf-8")
    return ResumePlan(
        turns=tuple(turns), tape=tuple(tape), previous=previous, dropped_events=dropped
    )


# ----------------------------------------------------------------- verification
def _essence(event: TrajectoryEvent) -> tuple:
    """What must match between a recorded and a replayed event (no times)."""
    if isinstance(event, StepRecord):
        ex = event.execution
        return (
            "step",
            event.step,
            event.code,
            event.answer,
            event.problem,
            None if ex is None else (ex.status, ex.stdout, ex.result),
        )
    if isinstance(event, AnswerRecorded):
        return ("answer", event.answer, event.ended, event.steps)
    return (event.type,)


def compare_turn(
    recorded: FinishedTurn, replayed: Sequence[TrajectoryEvent], limit: int = 3
) -> list[str]:
    """Differences between a recorded turn and its replay (at most ``limit``)."""
    want = [_essence(e) for e in recorded.events if isinstance(e, StepRecord | AnswerRecorded)]
    got = [_essence(e) for e in replayed if isinstance(e, StepRecord | AnswerRecorded)]
    out = []
    for w, g in zip(want, got, strict=False):
        if w != g:
            what = f"step {w[1]}" if w[0] == "step" else "the answer"
            out.append(f"turn {recorded.turn}: {what} came out differently on replay")
            if len(out) >= limit:
                break
    if len(want) != len(got):
        out.append(f"turn {recorded.turn}: {len(got)} steps on replay, {len(want)} recorded")
    return out


class ResumeRecord(BaseModel):
    """One line of ``resumes.jsonl``: what a resume did and what it cost."""

    model_config = ConfigDict(frozen=True)

    at: float = Field(default_factory=time.time)
    replayed_turns: int
    replayed_cells: int
    """Code cells of the finished turns run again in the new kernel."""
    replay_seconds: float
    """Wall time of the whole replay (kernel rebuild, lineage, manager, state store)."""
    dropped_events: int
    """Events of the half-finished turn, redone."""
    divergences: list[str] = Field(default_factory=list)
    previous: Path


def log_resume(run_dir: Path, record: ResumeRecord) -> None:
    """Append ``record`` to ``resumes.jsonl``."""
    with open(run_dir / RESUMES, "a", encoding="utf-8") as fh:
        fh.write(scrub(record.model_dump_json()) + "\n")
