"""The validity-guided reward of a manager trajectory.

``validity_reward(manager_trajectory, evidence)`` scores the actions a manager policy
took at each activation of a trajectory (see `stateguard.train.records`) against what
the replay knows for certain: the lifecycle's legality table, the lineage and outputs
the view showed, and where the fault was planted.

    r = (w_p * protocol + w_g * grounding + w_i * intervention + w_o * outcome)
        / (sum of the weights of the known parts)
        - beta_fp * false_repairs - beta_fn * missed_faults

=============  =======  ==============================================================
part           default  what it is (each in [0, 1])
=============  =======  ==============================================================
protocol       0.25     share of activations whose actions are valid: each parses as
                        one action of the JSON protocol, tool actions come first and
                        exactly one control action ends the activation, and the
                        lifecycle allows that action there (legal phase, a draft where
                        one is needed, COMMIT only after UPDATE and FINALIZE, REPAIR
                        within the repair budget)
grounding      0.25     share of checkable claims supported: variables an UPDATE
                        records or a REPAIR suspects are in the lineage the view
                        showed, relation targets are committed states, conclusions'
                        numbers appear in execution results or tool outputs (1 when
                        nothing is checkable)
intervention   0.25     mean quality of the repairs issued where the label is REPAIR:
                        1 for a repair backed by localized evidence (naming the
                        fault's variable or a check the view's evidence found,
                        quoting the planted code or naming the step that runs it)
                        that fixed the turn, ``unbacked_repair`` (0.5) for any
                        other; 1
                        when no repair was issued at a fault (a miss is charged by
                        ``beta_fn`` alone)
outcome        0.25     share of the trajectory's judged turns answered correctly (or
                        ``evidence.outcome``); unknown: left out of the weighted mean
beta_fp        0.5      cost of each false repair: REPAIR where the label allows none
beta_fn        0.25     cost of each missed fault: no REPAIR where the label is REPAIR
=============  =======  ==============================================================

Each mistake is charged once. A false repair costs more than a missed one
(``beta_fp > beta_fn``, enforced): a repair hint sends a correct worker back to redo a
right result and teaches it to distrust its own work, while a miss leaves the fault
for the next check. So, other things equal, a trajectory with one false repair scores
``beta_fp - beta_fn`` below one with one miss. With the defaults a repair at a real
fault, even an unbacked one, scores above a miss, and a perfect trajectory scores 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stateguard.manager import actions as A
from stateguard.train.process_reward import RewardError
from stateguard.train.records import Activation, FaultInfo, ManagerTrajectory
from stateguard.train.validity_checks import (
    RawAction,
    control_of,
    grounding_claims,
    localized,
    protocol_violations,
)

ActionSource = Literal["label", "proposed", "shadow"]


class ValidityConfig(BaseModel):
    """Weights and penalties of the validity reward (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    w_protocol: float = Field(default=0.25, ge=0.0)
    w_grounding: float = Field(default=0.25, ge=0.0)
    w_intervention: float = Field(default=0.25, ge=0.0)
    w_outcome: float = Field(default=0.25, ge=0.0)
    beta_fp: float = Field(default=0.5, ge=0.0)
    """Cost of one false repair (a REPAIR where the forced label has none)."""
    beta_fn: float = Field(default=0.25, ge=0.0)
    """Cost of one missed fault (no REPAIR where the forced label is REPAIR)."""
    unbacked_repair: float = Field(default=0.5, ge=0.0, le=1.0)
    """Credit of a repair at a fault that is not localized or did not fix the turn."""
    max_actions: int = Field(default=8, ge=1)
    """Actions one activation may take (the harness's budget)."""
    max_repairs: int = Field(default=3, ge=1)
    """Repairs one state may get (the harness's budget)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.beta_fp <= self.beta_fn:
            raise ValueError(
                f"beta_fp ({self.beta_fp}) must be greater than beta_fn ({self.beta_fn}): "
                "a false repair costs more than a missed fault"
            )
        if self.w_protocol + self.w_grounding + self.w_intervention + self.w_outcome <= 0:
            raise ValueError("the weights w_protocol..w_outcome sum to 0")
        return self


class RewardEvidence(BaseModel):
    """What the replay knows beyond the activations themselves."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outputs: tuple[str, ...] | None = None
    """Execution results and tool outputs of the trajectory (None: unknown, so
    conclusions are not checked)."""
    variables: tuple[str, ...] = ()
    """More variable keys lineage holds, beyond those the views show."""
    fixed_turns: tuple[int, ...] | None = None
    """Turns the repair fixed (None: taken from the trajectory's turn outcomes)."""
    outcome: float | None = Field(default=None, ge=0.0, le=1.0)
    """Outcome in [0, 1] (None: the share of judged turns answered correctly)."""
    fault: FaultInfo | None = None
    """The planted fault (None: the trajectory's)."""


class ActivationAttempt(BaseModel):
    """The actions a policy emitted at one activation, in order."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    activation: Activation
    actions: tuple[RawAction, ...]
    tool_results: tuple[str, ...] = ()
    """What the tool actions returned (count as outputs for grounding)."""


class ValidityScore(BaseModel):
    """The validity reward with its parts and what went wrong."""

    model_config = ConfigDict(frozen=True)

    total: float
    protocol: float
    grounding: float
    intervention: float
    outcome: float | None
    false_repairs: int
    missed_faults: int
    rewarded_repairs: int
    fault_activations: int
    violations: tuple[str, ...] = ()
    """Protocol violations, as ``activation N: what``."""
    ungrounded: tuple[str, ...] = ()
    """Unsupported claims, as ``activation N: what``."""


def attempts_of(
    trajectory: ManagerTrajectory, source: ActionSource = "label"
) -> list[ActivationAttempt]:
    """A trajectory's activations with the actions of ``source``: the forced label, the
    deterministic proposal, or the shadow action of a policy under test (an activation
    without one has no action, which breaks the protocol)."""
    out = []
    for act in trajectory.activations:
        raw = {"label": act.label, "proposed": act.proposed, "shadow": act.shadow}[source]
        out.append(ActivationAttempt(activation=act, actions=() if raw is None else (raw,)))
    return out


def _outcome(trajectory: ManagerTrajectory | None, evidence: RewardEvidence) -> float | None:
    if evidence.outcome is not None:
        return evidence.outcome
    if trajectory is None:
        return None
    judged = [t.correct for t in trajectory.turns if t.correct is not None]
    return sum(judged) / len(judged) if judged else None


def _fixed(trajectory: ManagerTrajectory | None, evidence: RewardEvidence) -> set[int]:
    if evidence.fixed_turns is not None:
        return set(evidence.fixed_turns)
    if trajectory is None:
        return set()
    return {t.turn_id for t in trajectory.turns if t.fixed_by_repair}


def validity_breakdown(
    manager_trajectory: ManagerTrajectory | Sequence[ActivationAttempt],
    evidence: RewardEvidence | None = None,
    config: ValidityConfig | None = None,
    *,
    source: ActionSource = "label",
) -> ValidityScore:
    """The validity reward and its parts (see the module docstring)."""
    cfg = config or ValidityConfig()
    ev = evidence or RewardEvidence()
    trajectory = manager_trajectory if isinstance(manager_trajectory, ManagerTrajectory) else None
    attempts = attempts_of(trajectory, source) if trajectory else list(manager_trajectory)  # type: ignore[arg-type]
    if not attempts:
        raise RewardError("manager_trajectory: no activations to score")
    for i, a in enumerate(attempts):
        if not isinstance(a, ActivationAttempt):
            raise RewardError(
                f"manager_trajectory[{i}]: expected an ActivationAttempt, got {type(a).__name__}"
            )
    fault = ev.fault or (trajectory.fault if trajectory else None)
    fixed = _fixed(trajectory, ev)
    valid = claims = unsupported = 0
    fp = fn = rewarded = expected = 0
    quality: list[float] = []
    violations: list[str] = []
    ungrounded: list[str] = []
    for a in attempts:
        act = a.activation
        problems = protocol_violations(
            act, a.actions, max_actions=cfg.max_actions, max_repairs=cfg.max_repairs
        )
        violations.extend(f"activation {act.index}: {p}" for p in problems)
        valid += not problems
        control = control_of(a.actions)
        outputs = None if ev.outputs is None else (*ev.outputs, *a.tool_results)
        n, bad = grounding_claims(act, control, outputs=outputs, extra_variables=ev.variables)
        claims += n
        unsupported += len(bad)
        ungrounded.extend(f"activation {act.index}: {b}" for b in bad)
        repaired = isinstance(control, A.Repair)
        allowed = act.label_kinds or (act.label_kind,)
        if act.label_kind == "REPAIR":
            expected += 1
            if not repaired:
                fn += 1
            elif act.turn in fixed and localized(control, act, fault):  # type: ignore[arg-type]
                rewarded += 1
                quality.append(1.0)
            else:
                quality.append(cfg.unbacked_repair)
        elif repaired and "REPAIR" not in allowed:
            fp += 1
    protocol = valid / len(attempts)
    grounding = 1.0 if claims == 0 else (claims - unsupported) / claims
    intervention = sum(quality) / len(quality) if quality else 1.0
    outcome = _outcome(trajectory, ev)
    parts = [
        (cfg.w_protocol, protocol),
        (cfg.w_grounding, grounding),
        (cfg.w_intervention, intervention),
    ]
    if outcome is not None:
        parts.append((cfg.w_outcome, outcome))
    weight = sum(w for w, _ in parts)
    mean = sum(w * v for w, v in parts) / weight if weight > 0 else 0.0
    total = mean - cfg.beta_fp * fp - cfg.beta_fn * fn
    return ValidityScore(
        total=total,
        protocol=protocol,
        grounding=grounding,
        intervention=intervention,
        outcome=outcome,
        false_repairs=fp,
        missed_faults=fn,
        rewarded_repairs=rewarded,
        fault_activations=expected,
        violations=tuple(violations),
        ungrounded=tuple(ungrounded),
    )


def validity_reward(
    manager_trajectory: ManagerTrajectory | Sequence[ActivationAttempt],
    evidence: RewardEvidence | None = None,
    config: ValidityConfig | None = None,
    *,
    source: ActionSource = "label",
) -> float:
    """The validity-guided reward of a manager trajectory (see the module docstring).

    ``manager_trajectory`` is a `ManagerTrajectory` (its activations scored with the
    actions of ``source``) or a sequence of `ActivationAttempt` (the actions a policy
    emitted at each activation); ``evidence`` adds what the replay knows (outputs,
    fixed turns, outcome).
    """
    return validity_breakdown(manager_trajectory, evidence, config, source=source).total
