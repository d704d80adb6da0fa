"""`HarnessConfig`: cadence and budgets of the lifecycle harness."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class HarnessConfig(BaseModel):
    """Cadence and budgets of the harness."""

    model_config = ConfigDict(frozen=True)

    lifecycle: Literal["turn", "segment"] = "turn"
    cadence: int = Field(default=5, ge=1)
    """Segment lifecycle: activate every `cadence` worker steps."""
    max_actions: int = Field(default=8, ge=1)
    max_repairs: int = Field(default=3, ge=1)
    max_chain: int = Field(default=4, ge=1)
    """Follow-up activations after OPEN/UPDATE/FINALIZE within one review point."""
    hint_states: int = Field(default=4, ge=0)
    hint_chars: int = Field(default=2000, ge=200)
