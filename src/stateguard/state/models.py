"""Pydantic models of the analytical-state graph.

An *analytical state* externalizes one step of the analysis: the issue it
addresses, the constraints it respects, the versioned variables it relied on,
what it concluded, and how it relates to earlier states. States start as
drafts, and are either committed (then immutable forever) or abandoned.

Relation direction: a relation stored on state ``B`` with
``related_state_id="A"`` means "B <type> A" (e.g. B progresses from A, B
invalidates A). ``A`` is therefore *upstream* of ``B``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stateguard.errors import StoreError
from stateguard.types import VarKey

RelationType = Literal["init", "progress", "branch", "invalidate", "combine"]
"""Kind of link between two analytical states (``init`` has no target)."""

StateStatus = Literal["draft", "committed", "abandoned"]
"""Lifecycle of a state: draft -> committed (immutable) | abandoned."""

VariableRole = Literal["read", "produced"]
"""What a state's turn did with a version: read it from before its steps, or produced it."""


class Constraint(BaseModel):
    """A constraint the analysis must respect (e.g. "exclude refunded orders").

    ``code`` is an optional executable check (a Python expression or snippet)
    that the manager may evaluate in the worker's kernel; it is never run here.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1)
    code: str | None = None


class VariableRef(BaseModel):
    """A specific version of a kernel variable that a state relied on or produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    version: int = Field(ge=0)
    value_summary: str = ""
    role: VariableRole | None = None
    """``read`` (from before the state's steps) or ``produced`` (by them), as lineage saw
    it; None in states recorded without roles (their relations follow the name rule of
    `stateguard.state.graph.invalidated_by`)."""

    @property
    def key(self) -> str:
        """Versioned key, e.g. ``margin@v2``."""
        return str(VarKey(self.name, self.version))


class StaleMark(BaseModel):
    """An earlier state found stale when the state holding this mark was committed.

    ``version`` is a version the earlier state read or produced; it depends on
    ``outdated`` (the version itself when it was superseded directly), which
    ``superseded_by`` replaced.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    state_id: str = Field(min_length=1)
    version: str = Field(min_length=1)
    outdated: str = Field(min_length=1)
    superseded_by: str = Field(min_length=1)

    @model_validator(mode="after")
    def _keys(self) -> StaleMark:
        for field in ("version", "outdated", "superseded_by"):
            value = getattr(self, field)
            if not VarKey.is_key(value):
                raise ValueError(
                    f"stale mark: {field} must be a version key name@vN, got {value!r}"
                )
        return self

    @property
    def summary(self) -> str:
        """``rate@v1 superseded by rate@v2``, or ``cost@v1 ← rate@v1 superseded by rate@v2``."""
        head = self.version
        if self.version != self.outdated:
            head += f" ← {self.outdated}"
        return f"{head} superseded by {self.superseded_by}"


class Relation(BaseModel):
    """A typed link from the owning state to another state.

    Invariant: ``related_state_id`` is ``None`` exactly when ``type == "init"``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: RelationType
    related_state_id: str | None = None

    @model_validator(mode="after")
    def _target_matches_type(self) -> Relation:
        if self.type == "init" and self.related_state_id is not None:
            raise ValueError(
                f"an 'init' relation has no target, got related_state_id={self.related_state_id!r}"
            )
        if self.type != "init" and not self.related_state_id:
            raise ValueError(f"a {self.type!r} relation needs a non-empty related_state_id")
        return self

    @property
    def summary(self) -> str:
        """Compact text form, e.g. ``progress→S2`` or ``init``."""
        if self.related_state_id is None:
            return self.type
        return f"{self.type}→{self.related_state_id}"


class AnalyticalState(BaseModel):
    """One node of the analytical-state graph (immutable value object).

    Invariants enforced on construction:
    - relations are deduplicated (first occurrence order kept);
    - an ``init`` relation excludes every other relation;
    - no relation targets the state itself;
    - ``source_step_start <= source_step_end`` when both are set;
    - a committed state has a non-blank ``issue``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, pattern=r"^\S+$")
    issue: str
    constraints: tuple[Constraint, ...] = ()
    used_variables: tuple[VariableRef, ...] = ()
    conclusions: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    source_step_start: int | None = Field(default=None, ge=0)
    source_step_end: int | None = Field(default=None, ge=0)
    checkpoint_id: str | None = None
    status: StateStatus = "draft"
    turn: int | None = Field(default=None, ge=0)
    created_at: float | None = None
    committed_at: float | None = None
    unverified_steps: tuple[int, ...] = ()
    """Steps of the span whose lineage was unverified (no valid report came back): what
    they read was not checked. A state committed with some says so."""
    stale_marks: tuple[StaleMark, ...] = ()
    """Earlier states this state's commit found stale, each with the version that made it
    so (see `StaleMark`); committed states never change, so staleness is recorded here."""

    @field_validator("relations", mode="after")
    @classmethod
    def _dedupe_relations(cls, relations: tuple[Relation, ...]) -> tuple[Relation, ...]:
        return tuple(dict.fromkeys(relations))

    @model_validator(mode="after")
    def _check_invariants(self) -> AnalyticalState:
        types = [r.type for r in self.relations]
        if "init" in types and len(types) > 1:
            raise ValueError(
                f"state {self.id}: an 'init' relation excludes other relations, got {types}"
            )
        for relation in self.relations:
            if relation.related_state_id == self.id:
                raise ValueError(f"state {self.id}: {relation.type!r} relation targets itself")
        for mark in self.stale_marks:
            if mark.state_id == self.id:
                raise ValueError(f"state {self.id}: a stale mark names the state itself")
        start, end = self.source_step_start, self.source_step_end
        if start is not None and end is not None and start > end:
            raise ValueError(
                f"state {self.id}: source_step_start={start} is after source_step_end={end}"
            )
        if self.status == "committed" and not self.issue.strip():
            raise ValueError(f"state {self.id}: a committed state needs a non-empty issue")
        return self

    @property
    def variable_keys(self) -> tuple[str, ...]:
        """Versioned keys of ``used_variables`` in order (e.g. ``("margin@v2",)``)."""
        return tuple(v.key for v in self.used_variables)

    @property
    def records_roles(self) -> bool:
        """Whether its versions carry lineage roles (read/produced), or it holds stale marks."""
        return bool(self.stale_marks) or any(v.role is not None for v in self.used_variables)

    def versions_with_role(self, role: VariableRole) -> tuple[VariableRef, ...]:
        """Its versions of one role, in order."""
        return tuple(v for v in self.used_variables if v.role == role)

    @property
    def related_ids(self) -> tuple[str, ...]:
        """Ids this state links to, in relation order, without duplicates."""
        ids = (r.related_state_id for r in self.relations if r.related_state_id is not None)
        return tuple(dict.fromkeys(ids))

    def with_changes(self, **changes: Any) -> AnalyticalState:
        """Return a validated copy with ``changes`` applied.

        Raises ``StoreError`` if this state is committed (committed states are
        immutable) or if a key is not a field; raises pydantic's
        ``ValidationError`` if the result violates an invariant.
        """
        if self.status == "committed":
            raise StoreError(f"with_changes on state {self.id}: committed states are immutable")
        unknown = sorted(set(changes) - set(type(self).model_fields))
        if unknown:
            raise StoreError(f"with_changes on state {self.id}: unknown field(s) {unknown}")
        data = self.model_dump()
        data.update(changes)
        return type(self).model_validate(data)


class StateIndexEntry(BaseModel):
    """Compact summary of a committed state, for listing the graph cheaply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    issue: str
    variables: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    turn: int | None = None

    @classmethod
    def of(cls, state: AnalyticalState) -> StateIndexEntry:
        """Summarize ``state`` (variable keys and ``type→id`` relation strings)."""
        return cls(
            id=state.id,
            issue=state.issue,
            variables=state.variable_keys,
            relations=tuple(r.summary for r in state.relations),
            turn=state.turn,
        )
