"""Manager-trajectory records: what the manager saw at each activation and what was right.

A *branch* is one replay of one task through the bench replay path with the
deterministic manager: clean, or with one planted fault. Every call of the manager's
policy is an `Activation`: the observation it got (which carries the draft and the
committed-state index), the evidence the deterministic checks found in that view, the
action the deterministic policy proposed, and the *forced* correct action (`label`),
derived from the known fault rather than from any policy:

* before a repair, the faulted turn's review ends in ``REPAIR``;
* after a repair, the turn must not repair again and must ``COMMIT_STATE``;
* clean turns commit (``UPDATE_STATE``, ``FINALIZE_RELATIONS`` with the relations
  inferred from lineage, ``COMMIT_STATE``).

The replay executes the label (teacher forcing), so every later view is the view on the
labelled path. A `ManagerTrajectory` is a run of activations with its kind:

* ``clean`` — a task without a fault, all turns;
* ``counterfactual`` — a faulted task up to and including the faulted turn's ``REPAIR``;
* ``repair`` — the same branch after the repair hint: the obedient replay re-ran the
  reference code, and the turn is reviewed again and committed.

All models are frozen pydantic v2 models, written as JSON lines (one trajectory a line).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stateguard.errors import StateguardError
from stateguard.finding import Finding
from stateguard.manager import actions as A
from stateguard.manager.policies.base import Observation

__all__ = [
    "RECORDS_VERSION",
    "Activation",
    "FaultInfo",
    "ManagerTrajectory",
    "RecordsError",
    "RevisionInfo",
    "TrajectoryKind",
    "TurnOutcome",
    "read_trajectories",
    "write_trajectories",
]

RECORDS_VERSION = 2
"""2: evidence items are `stateguard.finding.Finding` (severity, basis, facts); version 1
files (the former manager ``Evidence``) no longer validate."""

TrajectoryKind = Literal["clean", "counterfactual", "repair"]

LabelReason = Literal[
    "open-turn",  # turn start: open the turn's state
    "clean-commit",  # a clean attempt: update, finalize relations, commit
    "fault-repair",  # the attempt under review carries the planted fault: repair
    "post-repair-commit",  # the redo after a repair: no second repair, commit
    "passthrough",  # no rule applies (e.g. a step outside any turn): the proposal is kept
]


class RecordsError(StateguardError):
    """A trajectory file that cannot be read: names the file and the line."""


class FaultInfo(BaseModel):
    """The fault planted in a branch (from `stateguard.bench.inject.Candidate`)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """The injector: stale-reuse, dropped-constraint, flipped-comparison, scope-change, ..."""
    turn_id: int
    ident: str
    description: str
    faulty_code: str
    reference_code: str = ""
    variable: str | None = None
    alias: str | None = None
    """Stale reuse: the name of the pre-revision copy the faulty code reads."""
    read_version: str | None = None
    pre_version: str | None = None
    revision_turn: int | None = None
    node: dict[str, Any] | None = None
    predicted_outcome: str | None = None
    """Dry-run result of the plan: silent | crash | none."""


RevisionKind = Literal["parameter", "formula", "direction", "filter"]


class RevisionInfo(BaseModel):
    """A revision applied to the task itself (`stateguard.train.revisions`): turn
    ``turn_id``'s reference code is re-run with one element changed, as a new turn
    ``revision_turn`` inserted right after it (turns after it are renumbered by one)."""

    model_config = ConfigDict(frozen=True)

    kind: RevisionKind
    turn_id: int
    """The revised turn (numbering of the original task)."""
    revision_turn: int
    """The inserted revision turn (numbering of the revised task: ``turn_id + 1``)."""
    description: str
    revised_code: str
    node: dict[str, Any] | None = None
    effect_turns: tuple[int, ...] = ()
    """Later turns (revised numbering) whose gold the revision changed."""
    revised_task_id: str = ""
    """The revised task's id (its gold is cached under it)."""


class Activation(BaseModel):
    """One call of the manager's policy, with the forced correct action."""

    model_config = ConfigDict(frozen=True)

    index: int
    """0-based position among the branch's policy calls (stable across replays)."""
    event: str
    """turn_start | review | segment."""
    turn: int
    chain: int = 0
    """Position within the activation chain of one event (OPEN/UPDATE/FINALIZE chain on)."""
    attempt: int = 1
    """The worker's attempt at this turn the activation reviews (2 after one repair)."""
    state_id: str | None = None
    """The draft the activation acts on (the state it opens, for OPEN_STATE)."""
    observation: Observation
    """What the policy got: event, question, answer, pending steps, draft, committed index."""
    evidence: tuple[Finding, ...] = ()
    """What the deterministic checks found in this view (stale reads, unsupported claims...)."""
    proposed: dict[str, Any] | None = None
    """The deterministic policy's action in this view (JSON of the action)."""
    label: dict[str, Any]
    """The forced correct action (JSON of the action, the LLM policy's protocol)."""
    label_kinds: tuple[str, ...] = ()
    """Action kinds that count as correct here (the label's kind first)."""
    label_reason: LabelReason
    faulted: bool = False
    """The steps under review hold the planted fault (first attempt of the faulted turn)."""
    after_repair: bool = False
    """A repair hint was issued earlier in this turn."""
    result: str | None = None
    """The harness's result of applying the label (``committed S3``, ``repair 1 (light)``)."""
    shadow: dict[str, Any] | None = None
    """Evaluation only: the action of the policy under test in this view (None if not asked)."""
    shadow_valid: bool | None = None
    """Evaluation only: whether the policy under test replied with one valid, legal action."""

    @property
    def label_action(self) -> A.ControlAction | A.ToolAction:
        """The label as a typed action."""
        return A.ACTION_ADAPTER.validate_python(self.label)

    @property
    def label_kind(self) -> str:
        """The label's action kind."""
        return str(self.label["kind"])


class TurnOutcome(BaseModel):
    """How a turn of the branch ended (judged against the clean run)."""

    model_config = ConfigDict(frozen=True)

    turn_id: int
    correct: bool | None = None
    """Final attempt judged right (None: not judged, e.g. skipped)."""
    first_correct: bool | None = None
    attempts: int = 1
    fixed_by_repair: bool = False


class ManagerTrajectory(BaseModel):
    """A run of activations of one branch: clean, counterfactual or repair."""

    model_config = ConfigDict(frozen=True)

    version: int = RECORDS_VERSION
    id: str
    """``{suite}/{task_id}/{kind}/{injector or 'clean'}/{n}``; unique within a dataset."""
    branch_id: str
    """Counterfactual and repair trajectories of one replay share it."""
    kind: TrajectoryKind
    suite: str
    task_id: str
    injector: str | None = None
    fault: FaultInfo | None = None
    revision: RevisionInfo | None = None
    """Set on the branches of a revised task (turn numbers are the revised task's)."""
    activations: tuple[Activation, ...]
    turns: tuple[TurnOutcome, ...] = ()
    """Outcomes of the turns the trajectory covers."""
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def labels(self) -> list[dict[str, Any]]:
        """The forced action sequence."""
        return [a.label for a in self.activations]


def write_trajectories(path: Path, trajectories: Iterable[ManagerTrajectory]) -> int:
    """Write trajectories as JSON lines; returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for t in trajectories:
            fh.write(t.model_dump_json() + "\n")
            n += 1
    tmp.replace(path)
    return n


def read_trajectories(path: Path) -> Iterator[ManagerTrajectory]:
    """Read trajectories written by `write_trajectories`; a bad line is a `RecordsError`."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield ManagerTrajectory.model_validate_json(line)
            except ValidationError as exc:
                raise RecordsError(f"{path}:{lineno}: not a manager trajectory: {exc}") from None
