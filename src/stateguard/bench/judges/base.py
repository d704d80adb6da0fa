"""The verdict type every judge returns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Judgement(BaseModel):
    """Outcome of judging one turn.

    ``correct`` is the binary verdict used by metrics; ``score`` is in [0, 1] (fraction
    of fields right for LongDS, 1 / 0.5 / 0 for DSEval's yes / partial / no).
    ``excluded`` marks a turn that could not be judged (gold unavailable, LLM judge
    reply unparseable, deterministic rules undecided); metrics count it apart from right
    and wrong answers.
    """

    model_config = ConfigDict(frozen=True)

    correct: bool
    score: float = Field(ge=0.0, le=1.0)
    details: dict[str, Any] = Field(default_factory=dict)
    excluded: bool = False
    undecided: bool = False
    """The deterministic rules cannot tell (prose, unclear requested fields); ``excluded``
    is then True too. An LLM judge, when configured, decides such turns."""
