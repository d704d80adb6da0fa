"""Manager actions: a discriminated union on `kind`.

Control actions end an activation; tool actions gather evidence and the policy
sees their result before choosing its next action.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from stateguard.finding import Finding
from stateguard.state import Constraint, Relation


class _Action(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# -- control actions --------------------------------------------------------


class ResumeWorker(_Action):
    """Let the worker continue without changing any state."""

    kind: Literal["RESUME_WORKER"] = "RESUME_WORKER"


class OpenState(_Action):
    """Open a draft state for the upcoming or pending work."""

    kind: Literal["OPEN_STATE"] = "OPEN_STATE"
    issue: str
    constraints: tuple[Constraint, ...] = ()
    relations: tuple[Relation, ...] = ()
    """Proposed relations (turn-aligned: before the worker runs)."""


class UpdateState(_Action):
    """Fill the draft: issue, source interval, used variables, conclusions.

    Variable versions and values are bound by the harness from lineage: a
    policy names variables, the harness decides which version they are.
    """

    kind: Literal["UPDATE_STATE"] = "UPDATE_STATE"
    issue: str | None = None
    source_interval: tuple[int, int] | None = None
    used_variables: tuple[str, ...] = ()
    """Variable names (``margin``) or keys (``margin@v2``) the state uses or produces."""
    conclusions: tuple[str, ...] = ()


class FinalizeRelations(_Action):
    """Confirm or reselect the draft's relations to committed states."""

    kind: Literal["FINALIZE_RELATIONS"] = "FINALIZE_RELATIONS"
    mode: Literal["confirm", "reselect"] = "confirm"
    relations: tuple[Relation, ...] = ()
    conflict_evidence: tuple[str, ...] = ()


class CommitState(_Action):
    """Verify and commit the draft; committed states are immutable."""

    kind: Literal["COMMIT_STATE"] = "COMMIT_STATE"


class Repair(_Action):
    """Send the worker a repair hint: concrete evidence, never a solution."""

    kind: Literal["REPAIR"] = "REPAIR"
    analytical_evidence: tuple[str, ...]
    error_hint: str = ""
    """The policy's own account of the faulty reasoning (LLM policies)."""
    suspected_variables: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    """Deterministic checks that failed; `stateguard.hints` words their reasoning."""
    evidence: tuple[Finding, ...] = ()
    """The findings as typed facts (deterministic policies); else `analytical_evidence`."""


class AbandonState(_Action):
    """Drop the draft state."""

    kind: Literal["ABANDON_STATE"] = "ABANDON_STATE"
    reason: str = ""


class Abstain(_Action):
    """Do nothing this activation."""

    kind: Literal["ABSTAIN"] = "ABSTAIN"
    reason: str = ""


# -- tool actions -----------------------------------------------------------


class CheckExecution(_Action):
    """Look up the execution result of a step."""

    kind: Literal["check_execution"] = "check_execution"
    step_id: int


class InspectPython(_Action):
    """AST structure of a code snippet: reads, writes, mutations, calls."""

    kind: Literal["inspect_python"] = "inspect_python"
    code: str


class CompilePython(_Action):
    """Whether a snippet compiles."""

    kind: Literal["compile_python"] = "compile_python"
    code: str


class RunProbe(_Action):
    """Run code against a copy-on-write snapshot of the worker's namespace."""

    kind: Literal["run_probe"] = "run_probe"
    code: str


class LoadState(_Action):
    """Full content of a committed state."""

    kind: Literal["load_state"] = "load_state"
    state_id: str


class TraceLineage(_Action):
    """Versions, derivation and staleness of a variable."""

    kind: Literal["trace_lineage"] = "trace_lineage"
    name: str


ControlAction = (
    ResumeWorker
    | OpenState
    | UpdateState
    | FinalizeRelations
    | CommitState
    | Repair
    | AbandonState
    | Abstain
)
ToolAction = CheckExecution | InspectPython | CompilePython | RunProbe | LoadState | TraceLineage
Action = Annotated[ControlAction | ToolAction, Field(discriminator="kind")]
ACTION_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)

CONTROL_KINDS = frozenset(
    {
        "RESUME_WORKER",
        "OPEN_STATE",
        "UPDATE_STATE",
        "FINALIZE_RELATIONS",
        "COMMIT_STATE",
        "REPAIR",
        "ABANDON_STATE",
        "ABSTAIN",
    }
)


def is_control(action: BaseModel) -> bool:
    """Whether an action ends the activation."""
    return getattr(action, "kind", None) in CONTROL_KINDS
