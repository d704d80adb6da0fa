"""What the manager tells the agent, as typed values: no wording here.

`StateNotice` lists earlier analytical states for reference; `RepairNotice` says why
a result cannot be accepted yet. `stateguard.hints` turns them into the text the
agent reads.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateguard.finding import FactValue, Finding

RepairMode = Literal["light", "heavy", "rollback"]
EvidenceTemplate = Literal[
    "stale_read", "stale_input", "no_successful_code", "not_printed", "decimals", "constraint"
]
"""The hint templates (``[evidence]`` of `stateguard.hints` templates) a manager finding
is worded by."""


class EvidenceFacts(BaseModel):
    """The typed facts a manager check puts in `Finding.facts`.

    The manager's checks (`stateguard.manager.evidence`, `.verify`, `.revisions`) report
    `stateguard.finding.Finding` items; their facts are these fields, by name (defaults
    left out). ``message`` is the manager's own description (logs, LLM prompts); the agent
    reads the wording `stateguard.hints` renders from ``template`` and the facts, or the
    message when there is no ``template`` (free text written by an LLM policy).
    """

    model_config = ConfigDict(frozen=True)

    template: EvidenceTemplate | None = None
    """The hint template that words the finding."""
    step: int | None = None
    """The step the finding is about (the one that read a stale value)."""
    outdated: str | None = None
    """The superseded version a stale value was derived from."""
    superseding: tuple[str, ...] = ()
    """The writes that made the finding's variables stale (``cogs@v2``)."""
    superseding_cell: int | None = None
    numbers: tuple[str, ...] = ()
    """Numbers of the answer the finding is about."""
    places: int | None = None
    """Decimal places the question asks for."""
    constraint: str | None = None
    detail: str = ""
    """An error message, or a judge's reason."""
    ambiguous: bool = False
    """Not settled by the evidence alone: the hybrid policy asks an LLM judge, the
    deterministic policy does not repair on it."""

    @classmethod
    def of(cls, finding: Finding) -> EvidenceFacts:
        """The manager facts of ``finding`` (other facts ignored; none when they do not
        fit these types, e.g. a finding of another layer)."""
        known = {k: v for k, v in finding.facts.items() if k in cls.model_fields}
        try:
            return cls.model_validate(known)
        except ValidationError:
            return cls()

    def as_facts(self) -> dict[str, FactValue]:
        """The fields set, as `Finding.facts`."""
        return self.model_dump(exclude_defaults=True)


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
    evidence: tuple[Finding, ...] = ()
    """Machine-checked findings, one per item (manager facts: `EvidenceFacts`)."""
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
