"""The verifier's boundary types: a step of a trajectory, the task, and a step's verdict."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stateguard.finding import Finding
from stateguard.kernel import ExecutionResult
from stateguard.lineage import CellRecord

Score = Literal[0.0, 0.5, 1.0]
"""1: correct; 0.5: a minor or correctable error (exploration included); 0: a fatal error."""

SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)

InvalidReason = Literal[
    "unparseable_score",
    "score_out_of_range",
    "rounds_exhausted",
    "model_error",
    "probe_unavailable",
]
"""Why a verdict has no score: the LLM layer could not produce one it can stand behind."""

Layer = Literal["execution", "deterministic", "llm"]


class VerifyTask(BaseModel):
    """What the trajectory is trying to do."""

    model_config = ConfigDict(frozen=True)

    question: str
    context: str = ""


class Step(BaseModel):
    """One step of a trajectory: reasoning plus one code cell and its observation, or an answer.

    ``execution`` and ``cell`` are what the kernel and lineage recorded (None for an
    answer step, or a recorded trajectory without them).
    """

    model_config = ConfigDict(frozen=True)

    thought: str = ""
    code: str | None = None
    observation: str = ""
    execution: ExecutionResult | None = None
    cell: CellRecord | None = None
    answer: str | None = None
    final: bool = False
    """The last step of its turn: it must carry the answer."""
    result: bool = False
    """The step's shown value is the turn's result (as DSEval judges the last cell's value):
    it must answer the question, not only prepare or explore."""

    @property
    def is_answer(self) -> bool:
        """The step proposes an answer (and runs no code)."""
        return self.answer is not None and self.code is None


class StepVerdict(BaseModel):
    """The score of one step with its rationale and evidence.

    Invariant: exactly one of ``score`` and ``invalid`` is set.
    """

    model_config = ConfigDict(frozen=True)

    score: Score | None = None
    invalid: InvalidReason | None = None
    invalid_detail: str = ""
    """What was wrong (the unparseable text, the model error…) when ``invalid`` is set."""
    rationale: str
    evidence: tuple[Finding, ...] = ()
    """Every finding of the checks on this step (alarms, doubts and notes)."""
    layer: Layer
    rounds: int = 0
    """LLM rounds spent (0 for the deterministic layers)."""
    probe_seconds: float = Field(default=0.0, ge=0.0)
    """Wall time spent in environment probes for this verdict."""
    tiebreak: Score | None = None
    """A second verifier's score, which orders steps this verdict scores alike
    (`stateguard.verify.chain`); None when not chained or when its verdict was invalid."""

    @model_validator(mode="after")
    def _one_of(self) -> StepVerdict:
        if (self.score is None) == (self.invalid is None):
            raise ValueError("a verdict has either a score or an invalid reason, not both")
        return self

    @property
    def valid(self) -> bool:
        """The verdict carries a score."""
        return self.score is not None
