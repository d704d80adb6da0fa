"""What the manager tells the agent, as typed values: no wording here.

`StateNotice` lists earlier analytical states for reference; `RepairNotice` says why
a result cannot be accepted yet. `stateguard.hints` turns them into the text the
agent reads.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

RepairMode = Literal["light", "heavy", "rollback"]
Finding = Literal[
    "stale_read", "stale_input", "no_successful_code", "not_printed", "decimals", "constraint"
]


class Evidence(BaseModel):
    """One concrete finding against the current turn's result, as typed facts.

    ``message`` is the manager's own description (logs, LLM prompts); the agent reads
    the wording `stateguard.hints` renders from ``finding`` and the facts, or the
    message when there is no ``finding`` (free text written by an LLM policy).
    """

    model_config = ConfigDict(frozen=True)

    check: str
    """stale_use | unsupported_claim | constraint_failed | output_requirement | silent_join |
    revised_constant | policy."""
    message: str
    variables: tuple[str, ...] = ()
    """Suspected variable versions (``margin@v1``)."""
    superseding: tuple[str, ...] = ()
    """The writes that made them stale (``cogs@v2``, with the cell)."""
    ambiguous: bool = False
    finding: Finding | None = None
    step: int | None = None
    """The step that read a stale value."""
    outdated: str | None = None
    """The superseded version a stale value was derived from."""
    superseding_cell: int | None = None
    numbers: tuple[str, ...] = ()
    """Numbers of the answer the finding is about."""
    places: int | None = None
    """Decimal places the question asks for."""
    constraint: str | None = None
    detail: str = ""
    """An error message, or a judge's reason."""


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
    stale: tuple[str, ...] = ()
    """Why it is stale, one per version: ``cost@v1 ← rate@v1 superseded by rate@v2``."""


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
    evidence: tuple[Evidence, ...] = ()
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
