"""What the manager tells the agent, as typed values: no wording here.

`StateNotice` lists earlier analytical states for reference; `RepairNotice` says why
a result cannot be accepted yet. `stateguard.hints` turns them into the text the
agent reads.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

RepairMode = Literal["light", "heavy", "rollback"]


class StateNote(BaseModel):
    """One earlier analytical state, as the agent may see it."""

    model_config = ConfigDict(frozen=True)

    id: str
    issue: str
    variables: tuple[str, ...] = ()
    """Versioned variables (``name@vN``) the state used or produced."""
    conclusions: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    """Relations to earlier states, e.g. ``progress S1``."""
    invalidated_by: tuple[str, ...] = ()
    """Later states whose writes superseded what this state used."""


class StateNotice(BaseModel):
    """Earlier states worth knowing about at the start of a turn."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["state"] = "state"
    states: tuple[StateNote, ...]


class RepairNotice(BaseModel):
    """Why the current result cannot be accepted yet (evidence, never a solution)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["repair"] = "repair"
    error_variables: tuple[str, ...] = ()
    """The suspected versions (``name@vN``)."""
    evidence: tuple[str, ...] = ()
    """Machine-checked findings, one per item."""
    checks: tuple[str, ...] = ()
    """Which checks failed (``stale_use``, ``unsupported_claim``, ``constraint_failed``,
    ``output_requirement``); the renderer words the reasoning for each."""
    reasoning: str = ""
    """Reasoning written by a policy (an LLM's own words), if any."""
    mode: RepairMode = "light"
    removed: tuple[str, ...] = ()
    """Heavy repair: names deleted from the namespace."""
    restored: tuple[str, ...] = ()
    """Rollback: names restored from `checkpoint`."""
    checkpoint: str | None = None


Notice = Annotated[StateNotice | RepairNotice, Field(discriminator="kind")]
