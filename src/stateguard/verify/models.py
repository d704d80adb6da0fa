"""The verifier's boundary types: the task and a step's verdict.

The step itself is `stateguard.checks.Step`, the one the worker records and the manager
reviews.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stateguard.finding import Finding

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
    def against(self) -> int:
        """How many findings count against the step (alarms and doubts): what orders
        steps that score alike, before any model is asked (notes do not count)."""
        return sum(1 for f in self.evidence if f.severity in ("alarm", "doubt"))

    @property
    def valid(self) -> bool:
        """The verdict carries a score."""
        return self.score is not None
