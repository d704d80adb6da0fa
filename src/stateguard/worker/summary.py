"""What ``answers.json`` holds: per-turn outcomes and the run summary, built from events.

The one tally of a turn (`TurnTally`, fed trajectory events) and the one set of run
totals (`RunTotals`, from per-turn outcomes) are defined here; the run report and the
bench count with them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from stateguard.kernel import Confinement
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ModelMessage,
    StepRecord,
    TrajectoryEvent,
)
from stateguard.worker.grading import Grade

REPEATS = frozenset({"repeated_failure", "repeated_cell"})
"""Problems of steps whose cell was not run because it repeats an earlier one."""
REFUSED = frozenset(
    {
        "ungrounded_answer",
        "copied_answer",
        "missing_fields",
        "unformed_answer",
        "valueless_answer",
        "error_answer",
        "unused_value",
        "unknown_name",
        "unread_column",
        "unbuilt_term",
        "unread_file",
        "unapplied_revision",
        "unused_parameter",
        "unused_term_parameter",
        "doubted_answer",
        "recomputed_answer",
        "element_answer",
        "fraction_answer",
        "impossible_share",
        "many_numbers",
        "repeated_value",
        "rows_for_totals",
        "parted_values",
    }
)
"""Problems of well-formed answers the worker refused or held back before review (numbers
no output showed, another turn's answer copied, a field of the requested form left out,
no value at all, a doubt asked once): rejected answers, not malformed replies."""


class TurnOutcome(BaseModel):
    """One turn's entry in ``answers.json``."""

    model_config = ConfigDict(frozen=True)

    turn: int
    """1-based turn number."""
    question: str
    context: str = ""
    answer: str | None
    unconfirmed: bool = False
    """No answer was accepted; ``answer`` is the latest turned away on a doubt alone
    (`stateguard.worker.events.AnswerRecorded.unconfirmed`)."""
    ended: str = "answer"
    """Why the turn ended: answer, steps, tokens, time, no_progress or interrupt."""
    gold: Any = None
    correct: bool | None = None
    fields: dict[str, bool] | None = None
    """Per-field verdicts for a mapping gold."""
    steps: int
    cells: int
    """Steps that executed code."""
    invalid_steps: int
    """Steps whose reply was malformed (got a corrective message)."""
    repeated_steps: int = 0
    """Steps whose cell repeated an earlier one (failed, or ran with nothing changed since),
    so it was not run."""
    hints: int
    """State hints delivered."""
    repairs: int
    """Repair hints delivered."""
    rejected_answers: int
    wall_time: float
    prompt_tokens: int
    completion_tokens: int
    manager_llm_calls: int
    cut_replies: dict[str, int] = {}
    """Replies of the worker's model ended by a bound, by the bound (tokens, seconds, line,
    marker; `stateguard.worker.events.ModelMessage.cut`)."""
    hint_tokens: int = 0
    """Tokens of the state hints the turn's prompt carried."""
    state_hint: str = ""
    """The state hint the turn's prompt carried at its start ("" for none)."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of the worker's model."""
        return self.prompt_tokens + self.completion_tokens


class TurnCounts(Protocol):
    """What run totals read of a turn's outcome (`TurnOutcome`, or a report's view of one,
    whose counts may be unknown)."""

    @property
    def answer(self) -> str | None: ...
    @property
    def correct(self) -> bool | None: ...
    @property
    def hints(self) -> int | None: ...
    @property
    def repairs(self) -> int | None: ...
    @property
    def manager_llm_calls(self) -> int | None: ...
    @property
    def tokens(self) -> int | None: ...
    @property
    def wall_time(self) -> float | None: ...


def _total(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


class RunTotals(BaseModel):
    """Totals over a run's turns; a count is ``None`` when no turn recorded it."""

    model_config = ConfigDict(frozen=True)

    turns: int
    answered: int
    graded: int
    correct: int
    hints: int | None
    repairs: int | None
    manager_llm_calls: int | None
    tokens: int | None
    wall_time: float | None

    @classmethod
    def of(cls, outcomes: Sequence[TurnCounts]) -> RunTotals:
        """The totals of ``outcomes``."""
        walls = [o.wall_time for o in outcomes if o.wall_time is not None]
        return cls(
            turns=len(outcomes),
            answered=sum(o.answer is not None for o in outcomes),
            graded=sum(o.correct is not None for o in outcomes),
            correct=sum(o.correct is True for o in outcomes),
            hints=_total(o.hints for o in outcomes),
            repairs=_total(o.repairs for o in outcomes),
            manager_llm_calls=_total(o.manager_llm_calls for o in outcomes),
            tokens=_total(o.tokens for o in outcomes),
            wall_time=sum(walls) if walls else None,
        )

    @property
    def accuracy(self) -> float | None:
        """Fraction of graded turns answered correctly (``None`` when nothing was graded)."""
        return self.correct / self.graded if self.graded else None


class RunSummary(BaseModel):
    """The content of ``answers.json``."""

    model_config = ConfigDict(frozen=True)

    task: str
    manager: str
    model: str
    run_dir: Path
    turns: tuple[TurnOutcome, ...] = ()
    wall_time: float = 0.0
    report: Path | None = None
    error: str | None = None
    """Why the run stopped early, if it did."""
    confinement: Confinement | None = None
    """Whether the kernel ran in the sandbox (None: the kernel never started)."""

    @property
    def totals(self) -> RunTotals:
        """Totals over the turns."""
        return RunTotals.of(self.turns)

    @property
    def graded(self) -> int:
        """Turns with a gold answer."""
        return self.totals.graded

    @property
    def correct(self) -> int:
        """Turns answered correctly."""
        return self.totals.correct


class TurnTally:
    """Counts of one turn, fed its events in order; `outcome` builds the `TurnOutcome`."""

    def __init__(self) -> None:
        self.cells = self.invalid = self.hints = self.repairs = self.proposed = 0
        self.repeated = 0
        self.replies = 0
        """Replies of the worker's model."""
        self.prompt_tokens = self.completion_tokens = 0
        self.cuts: dict[str, int] = {}
        self.hint_tokens = 0
        self.state_hint = ""

    @classmethod
    def of(cls, events: Iterable[TrajectoryEvent]) -> TurnTally:
        """The tally of a turn's events."""
        tally = cls()
        for event in events:
            tally.add(event)
        return tally

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of the worker's model."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, event: TrajectoryEvent) -> None:
        """Account for one event of the turn."""
        if isinstance(event, StepRecord):
            self.cells += event.execution is not None and not event.setup
            # a repeated failure is not a malformed reply: it is counted as not run
            self.invalid += event.problem is not None and event.problem not in REPEATS | REFUSED
            self.repeated += event.problem in REPEATS
            # A well-formed answer proposal (code steps never carry one).
            self.proposed += event.answer is not None and (
                event.problem is None or event.problem in REFUSED
            )
        elif isinstance(event, HintDelivered):
            if event.hint.kind == "repair":
                self.repairs += 1
            else:
                self.hints += 1
                self.hint_tokens += event.tokens
                if event.step is None and not self.state_hint:
                    self.state_hint = event.hint.text
        elif isinstance(event, ModelMessage) and event.role == "assistant":
            self.replies += 1
            self.prompt_tokens += event.prompt_tokens
            self.completion_tokens += event.completion_tokens
            if event.cut is not None:
                self.cuts[event.cut] = self.cuts.get(event.cut, 0) + 1

    def outcome(
        self, question: str, context: str, final: AnswerRecorded, verdict: Grade
    ) -> TurnOutcome:
        """The turn's outcome, given its final event (gold already filled in) and verdict."""
        return TurnOutcome(
            turn=final.turn,
            question=question,
            context=context,
            answer=final.answer,
            unconfirmed=final.unconfirmed,
            ended=final.ended,
            gold=final.gold,
            correct=verdict.correct,
            fields=verdict.fields,
            steps=final.steps,
            cells=self.cells,
            invalid_steps=self.invalid,
            repeated_steps=self.repeated,
            hints=self.hints,
            repairs=self.repairs,
            rejected_answers=self.proposed - (final.answer is not None and not final.unconfirmed),
            wall_time=final.wall_time,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            manager_llm_calls=final.manager_llm_calls,
            cut_replies=dict(self.cuts),
            hint_tokens=self.hint_tokens,
            state_hint=self.state_hint,
        )
