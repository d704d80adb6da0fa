"""Load a run directory into one immutable view the page renderer consumes.

A run directory holds ``trajectory.jsonl`` and ``answers.json`` (required),
``states.sqlite`` and ``analysis.ipynb`` (optional). ``answers.json`` is read
tolerantly: a missing or unusable key becomes ``None`` (shown as —), and a
per-turn value absent from it falls back to what the trajectory records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from stateguard.errors import StateguardError
from stateguard.state import AnalyticalState, StaleMark, StateStore
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ManagerLogged,
    ModelMessage,
    StepRecord,
    TrajectoryEvent,
    TurnStarted,
    read_trajectory,
)
from stateguard.worker.summary import RunTotals, TurnTally

TRAJECTORY = "trajectory.jsonl"
ANSWERS = "answers.json"
STATES = "states.sqlite"
NOTEBOOK = "analysis.ipynb"

TimelineItem = StepRecord | HintDelivered | ManagerLogged
"""Events shown in a turn's timeline, in trajectory order."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class TurnAnswer(_Frozen):
    """Outcome of one turn; every field may be unknown (``None``)."""

    answer: str | None = None
    unconfirmed: bool = False
    """No answer was accepted: ``answer`` is the latest one turned away on a doubt alone."""
    gold: Any | None = None
    correct: bool | None = None
    steps: int | None = None
    hints: int | None = None
    repairs: int | None = None
    wall_time: float | None = None
    tokens: int | None = None
    manager_llm_calls: int | None = None
    fields: dict[str, bool] | None = None
    """Per-field verdicts when the gold answer is a mapping."""
    recorded: bool = False
    """Whether the trajectory or answers.json recorded an answer for this turn at all."""
    ended: str | None = None
    """Why the turn ended (`stateguard.worker.events.TurnEnd`); None when it never did."""
    malformed: int | None = None
    """Malformed replies (a corrective message for form, a reply cut by a bound)."""
    cut_replies: dict[str, int] = {}
    """Replies ended by a bound, by the bound (tokens, seconds, line, marker)."""
    completion_tokens: int | None = None
    """Tokens the worker's model generated in the turn."""
    hint_tokens: int | None = None
    """Tokens of the state hints the turn's prompt carried."""
    state_hint: str | None = None
    """The state hint the turn's prompt carried at its start ("" for none; None: unknown)."""


class TurnView(_Frozen):
    """One user turn: the question, its timeline and its outcome."""

    turn: int
    question: str = ""
    context: str = ""
    items: tuple[TimelineItem, ...] = ()
    outcome: TurnAnswer = TurnAnswer()


class NotebookInfo(_Frozen):
    """What the report says about ``analysis.ipynb``."""

    code_cells: int = 0
    error: str | None = None


class RunMeta(_Frozen):
    """Run-level facts from ``answers.json`` when it records them."""

    task: str | None = None
    manager: str | None = None
    model: str | None = None
    error: str | None = None
    """Why the run stopped early, if it did."""


class RunData(_Frozen):
    """Everything the report shows about one run directory."""

    name: str
    meta: RunMeta = RunMeta()
    turns: tuple[TurnView, ...]
    states: tuple[AnalyticalState, ...] = ()
    """Committed states in commit order."""
    invalidators: dict[str, tuple[str, ...]] = {}
    """Stale committed state id -> the later committed states invalidating it."""
    stale_marks: dict[str, tuple[StaleMark, ...]] = {}
    """Stale committed state id -> which of its versions is stale and what superseded it
    (empty for states recorded without lineage roles)."""
    drafts: int = 0
    """Draft states never committed (not drawn)."""
    states_recorded: bool = False
    notebook: NotebookInfo | None = None
    summary: RunTotals

    @property
    def stale(self) -> frozenset[str]:
        """Ids of stale committed states."""
        return frozenset(self.invalidators)

    @property
    def stale_reads(self) -> int:
        """Reads of stale versions the timeline marks (every step's ``cell.stale_reads``)."""
        return sum(
            len(item.cell.stale_reads)
            for turn in self.turns
            for item in turn.items
            if isinstance(item, StepRecord) and item.cell is not None
        )


def _require(run_dir: Path, name: str) -> Path:
    path = run_dir / name
    if not path.is_file():
        raise StateguardError(f"report: {path} is missing (a run directory needs {name})")
    return path


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list | tuple):
        return len(value)
    return None


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _first(entry: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if entry.get(key) is not None:
            return entry[key]
    return None


def _tokens(entry: Mapping[str, Any]) -> int | None:
    value = _first(entry, "tokens", "total_tokens")
    if isinstance(value, Mapping):
        total = _as_int(value.get("total"))
        if total is not None:
            return total
        parts = [_as_int(value.get(k)) for k in ("prompt", "completion")]
        parts += [_as_int(value.get(k)) for k in ("prompt_tokens", "completion_tokens")]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None
    if value is not None:
        return _as_int(value)
    parts = [_as_int(entry.get(k)) for k in ("prompt_tokens", "completion_tokens")]
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def _fields(value: Any) -> dict[str, bool] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(k): v for k, v in value.items() if isinstance(v, bool)} or None


def _load_answers(path: Path) -> tuple[list[Mapping[str, Any]], RunMeta]:
    """Per-turn entries and run metadata.

    Accepted shapes: a list of per-turn objects, ``{"turns": [...], "task": …}``,
    or a mapping keyed by turn number.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateguardError(f"report: {path} is not readable JSON: {exc}") from exc
    meta = RunMeta()
    if isinstance(data, Mapping) and isinstance(data.get("turns"), list):
        meta = RunMeta(
            **{k: str(data[k]) for k in RunMeta.model_fields if data.get(k) not in (None, "")}
        )
        data = data["turns"]
    elif isinstance(data, Mapping):
        keyed = []
        for key, value in data.items():
            if isinstance(value, Mapping) and key.lstrip("-").isdigit():
                keyed.append({"turn": int(key), **value})
        data = keyed
    if not isinstance(data, list):
        raise StateguardError(
            f"report: {path} must hold a list of per-turn objects (or {{'turns': [...]}})"
        )
    return [e for e in data if isinstance(e, Mapping)], meta


def _match_answers(
    entries: Sequence[Mapping[str, Any]], turn_ids: Sequence[int]
) -> dict[int, Mapping[str, Any]]:
    """Entries with an integer ``turn`` match by it; the others by position."""
    matched: dict[int, Mapping[str, Any]] = {}
    for i, entry in enumerate(entries):
        turn = _as_int(entry.get("turn"))
        if turn is None:
            turn = turn_ids[i] if i < len(turn_ids) else (max(turn_ids, default=-1) + 1)
        matched.setdefault(turn, entry)
        turn_ids = sorted(set(turn_ids) | {turn})
    return matched


def _cuts(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int)}


def _hint_text(value: object, fallback: str | None) -> str | None:
    return value if isinstance(value, str) and value else fallback


def _ended(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("ended")
    return value if isinstance(value, str) and value else None


def _outcome(
    events: Sequence[TrajectoryEvent], entry: Mapping[str, Any] | None
) -> tuple[TurnAnswer, str]:
    """Merge answers.json (preferred) with trajectory counts; returns (outcome, question)."""
    entry = entry or {}
    recorded: AnswerRecorded | None = None
    for event in events:
        if isinstance(event, AnswerRecorded):
            recorded = event
    tally = TurnTally.of(events)
    messages = [e for e in events if isinstance(e, ModelMessage)]
    steps = [e for e in events if isinstance(e, StepRecord)]

    answer = _first(entry, "answer")
    if answer is None and recorded is not None:
        answer = recorded.answer
    gold = _first(entry, "gold", "gold_answer")
    if gold is None and recorded is not None:
        gold = recorded.gold
    correct = entry.get("correct")
    if not isinstance(correct, bool):
        correct = recorded.correct if recorded is not None else None

    def pick(keys: tuple[str, ...], fallback: int | None) -> int | None:
        value = _as_int(_first(entry, *keys))
        return fallback if value is None else value

    tokens = _tokens(entry)
    if tokens is None and messages:
        tokens = tally.tokens
    wall = _as_float(_first(entry, "wall_time", "wall_time_s", "seconds"))
    if wall is None and recorded is not None:
        wall = recorded.wall_time
    outcome = TurnAnswer(
        answer=None if answer is None else str(answer),
        unconfirmed=entry.get("unconfirmed") is True
        or (recorded is not None and recorded.unconfirmed),
        gold=gold,
        correct=correct,
        steps=pick(("steps",), recorded.steps if recorded else (len(steps) or None)),
        hints=pick(("hints", "state_hints"), tally.hints),
        repairs=pick(("repairs", "repair_hints"), tally.repairs),
        wall_time=wall,
        tokens=tokens,
        manager_llm_calls=pick(
            ("manager_llm_calls", "manager_calls"),
            recorded.manager_llm_calls if recorded else None,
        ),
        fields=_fields(entry.get("fields")),
        recorded=recorded is not None or answer is not None,
        ended=recorded.ended if recorded is not None else _ended(entry),
        malformed=pick(("invalid_steps",), tally.invalid if steps else None),
        cut_replies=_cuts(entry.get("cut_replies")) or dict(tally.cuts),
        completion_tokens=pick(
            ("completion_tokens",), tally.completion_tokens if messages else None
        ),
        hint_tokens=pick(("hint_tokens",), tally.hint_tokens if events else None),
        state_hint=_hint_text(entry.get("state_hint"), tally.state_hint if events else None),
    )
    question = _first(entry, "question")
    return outcome, "" if question is None else str(question)


def _turns(trajectory: Path, answers: Path) -> tuple[tuple[TurnView, ...], RunMeta]:
    by_turn: dict[int, list[TrajectoryEvent]] = {}
    try:
        for event in read_trajectory(trajectory):
            by_turn.setdefault(event.turn, []).append(event)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise StateguardError(f"report: {trajectory} is not a valid trajectory: {exc}") from exc
    loaded, meta = _load_answers(answers)
    entries = _match_answers(loaded, sorted(by_turn))
    views = []
    for turn in sorted(set(by_turn) | set(entries)):
        events = by_turn.get(turn, [])
        outcome, asked = _outcome(events, entries.get(turn))
        started = next((e for e in events if isinstance(e, TurnStarted)), None)
        items = tuple(
            e for e in events if isinstance(e, StepRecord | HintDelivered | ManagerLogged)
        )
        views.append(
            TurnView(
                turn=turn,
                question=started.question if started else asked,
                context=started.context if started else "",
                items=items,
                outcome=outcome,
            )
        )
    return tuple(views), meta


def _summary(turns: Sequence[TurnView]) -> RunTotals:
    return RunTotals.of([t.outcome for t in turns])


def _notebook(path: Path) -> NotebookInfo | None:
    if not path.is_file():
        return None
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        return NotebookInfo(code_cells=sum(c.get("cell_type") == "code" for c in cells))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as exc:
        return NotebookInfo(error=f"unreadable ({type(exc).__name__})")


def load_run(run_dir: Path) -> RunData:
    """Read every file of ``run_dir``; missing required files raise StateguardError."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise StateguardError(f"report: run directory {run_dir} does not exist")
    turns, meta = _turns(_require(run_dir, TRAJECTORY), _require(run_dir, ANSWERS))
    states: list[AnalyticalState] = []
    invalidators: dict[str, tuple[str, ...]] = {}
    marks: dict[str, tuple[StaleMark, ...]] = {}
    drafts = 0
    db = run_dir / STATES
    if db.is_file():
        with StateStore(db) as store:
            states = store.committed()
            invalidators = store.invalidation_map()
            marks = {k: v for k, v in store.stale_marks().items() if k in invalidators}
            drafts = len(store.drafts())
    return RunData(
        name=run_dir.resolve().name,
        meta=meta,
        turns=turns,
        states=tuple(states),
        invalidators=invalidators,
        stale_marks=marks,
        drafts=drafts,
        states_recorded=db.is_file(),
        notebook=_notebook(run_dir / NOTEBOOK),
        summary=_summary(turns),
    )
