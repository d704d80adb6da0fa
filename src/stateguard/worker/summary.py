"""What ``answers.json`` holds: per-turn outcomes and the run summary, built from events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


class TurnOutcome(BaseModel):
    """One turn's entry in ``answers.json``."""

    model_config = ConfigDict(frozen=True)

    turn: int
    """1-based turn number."""
    question: str
    context: str = ""
    answer: str | None
    ended: str = "answer"
    """Why the turn ended: answer, steps, time, no_progress or interrupt."""
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
    def graded(self) -> int:
        """Turns with a gold answer."""
        return sum(t.correct is not None for t in self.turns)

    @property
    def correct(self) -> int:
        """Turns answered correctly."""
        return sum(t.correct is True for t in self.turns)


class TurnTally:
    """Counts of one turn, fed its events in order; `outcome` builds the `TurnOutcome`."""

    def __init__(self) -> None:
        self.cells = self.invalid = self.hints = self.repairs = self.proposed = 0
        self.repeated = 0
        self.prompt_tokens = self.completion_tokens = 0

    def add(self, event: TrajectoryEvent) -> None:
        """Account for one event of the turn."""
        if isinstance(event, StepRecord):
            self.cells += event.execution is not None
            # a repeated failure is not a malformed reply: it is counted as not run
            self.invalid += event.problem is not None and event.problem not in REPEATS
            self.repeated += event.problem in REPEATS
            # A valid answer proposal (code steps never carry one).
            self.proposed += event.answer is not None and event.problem is None
        elif isinstance(event, HintDelivered):
            if event.hint.kind == "repair":
                self.repairs += 1
            else:
                self.hints += 1
        elif isinstance(event, ModelMessage) and event.role == "assistant":
            self.prompt_tokens += event.prompt_tokens
            self.completion_tokens += event.completion_tokens

    def outcome(
        self, question: str, context: str, final: AnswerRecorded, verdict: Grade
    ) -> TurnOutcome:
        """The turn's outcome, given its final event (gold already filled in) and verdict."""
        return TurnOutcome(
            turn=final.turn,
            question=question,
            context=context,
            answer=final.answer,
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
            rejected_answers=self.proposed - (final.answer is not None),
            wall_time=final.wall_time,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            manager_llm_calls=final.manager_llm_calls,
        )
