"""The checks behind the validity reward: protocol, grounding and localization.

Each check looks at one activation: the actions a policy emitted there (tool actions,
then one control action) against the view it had (`records.Activation`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from stateguard.errors import IllegalActionError
from stateguard.manager import actions as A
from stateguard.manager.drafts import Draft
from stateguard.manager.lifecycle import check_legal
from stateguard.manager.notes import EvidenceFacts
from stateguard.manager.policies.base import Observation
from stateguard.train.records import Activation, FaultInfo
from stateguard.types import VarKey
from stateguard.worker.grounding import unseen_numbers

RawAction = dict[str, Any] | str | A.ControlAction | A.ToolAction
"""An action as a policy emitted it: typed, JSON (the LLM protocol), or reply text."""


def parse_actions(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order (a reply may hold several)."""
    decoder = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    i = 0
    while (start := text.find("{", i)) >= 0:
        try:
            obj, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            i = start + 1
            continue
        if isinstance(obj, dict):
            out.append(obj)
        i = end
    return out


def typed_action(raw: RawAction) -> tuple[A.ControlAction | A.ToolAction | None, str]:
    """The typed action, or None with what is wrong with it."""
    if isinstance(raw, A.ControlAction | A.ToolAction):
        return raw, ""
    if isinstance(raw, str):
        found = parse_actions(raw)
        if len(found) != 1:
            return None, f"a reply holds {len(found)} JSON actions, not one"
        raw = found[0]
    try:
        return A.ACTION_ADAPTER.validate_python(raw), ""
    except ValidationError as exc:
        kind = raw.get("kind") if isinstance(raw, dict) else None
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return None, f"not a valid action (kind {kind!r}): {where}: {first['msg']}"


def protocol_violations(
    activation: Activation, actions: Sequence[RawAction], *, max_actions: int, max_repairs: int
) -> list[str]:
    """What breaks the protocol: unparseable or extra actions, no or several control
    actions, a control action before a tool action, or one the lifecycle forbids here."""
    problems: list[str] = []
    typed = []
    for i, raw in enumerate(actions):
        action, why = typed_action(raw)
        if action is None:
            problems.append(f"action {i}: {why}")
        else:
            typed.append(action)
    if len(actions) > max_actions:
        problems.append(f"{len(actions)} actions, over the budget of {max_actions}")
    controls = [a for a in typed if A.is_control(a)]
    if not controls:
        problems.append("no control action ends the activation")
    elif len(controls) > 1:
        problems.append(f"{len(controls)} control actions in one activation")
    elif typed and not A.is_control(typed[-1]):
        problems.append("a tool action follows the control action")
    if len(controls) == 1:
        problems.extend(_illegal(activation, controls[0].kind, max_repairs))
    return problems


def _illegal(activation: Activation, kind: str, max_repairs: int) -> list[str]:
    reason = illegal_reason(kind, activation.observation, max_repairs)
    return [] if reason is None else [reason]


def illegal_reason(kind: str, obs: Observation, max_repairs: int) -> str | None:
    """Why the control action ``kind`` is illegal in the view ``obs`` (None: it is legal),
    by the manager's own lifecycle table."""
    draft = None
    if obs.draft is not None:
        draft = Draft(
            state=obs.draft,
            updated=obs.draft_updated,
            relations_final=obs.relations_final,
            repairs=obs.repair_attempts,
            step_start=0,
        )
    try:
        check_legal(kind, obs.event, draft, max_repairs)
    except IllegalActionError as exc:
        return str(exc)
    return None


def control_of(actions: Sequence[RawAction]) -> A.ControlAction | None:
    """The one control action of a protocol-valid sequence (the last control action else)."""
    found = None
    for raw in actions:
        action, _ = typed_action(raw)
        if action is not None and A.is_control(action):
            found = action
    return found  # type: ignore[return-value]


def known_variables(activation: Activation, extra: Iterable[str] = ()) -> set[str]:
    """Variable keys (``name@vN``) the view shows: created in the pending steps, held by
    committed states or the draft, named by the evidence, plus ``extra``."""
    obs = activation.observation
    keys: set[str] = set(extra)
    for step in obs.pending_steps:
        keys.update(str(k) for k in step.get("created", ()))
        keys.update(str(k) for k in step.get("stale_reads", ()))
    for entry in obs.committed_index:
        keys.update(str(k) for k in entry.get("variables", ()))
    if obs.draft is not None:
        keys.update(v.key for v in obs.draft.used_variables)
    for ev in activation.evidence:
        keys.update(ev.variables)
        keys.update(EvidenceFacts.of(ev).superseding)
    return keys


def _is_known(name: str, keys: set[str]) -> bool:
    if "@" in name:
        return name in keys
    return name in {VarKey.name_of(k) for k in keys} or name in keys


def grounding_claims(
    activation: Activation,
    control: A.ControlAction | None,
    *,
    outputs: Sequence[str] | None,
    extra_variables: Iterable[str] = (),
) -> tuple[int, list[str]]:
    """How many checkable claims the control action makes, and the unsupported ones.

    Claims: each variable an UPDATE_STATE records or a REPAIR suspects must be one the
    view shows (a bare name matches any version, a key ``name@vN`` only itself); each
    relation FINALIZE_RELATIONS or OPEN_STATE sets must target a committed state; each
    conclusion's numbers must appear in ``outputs`` (execution results and tool outputs;
    integers below 10 are not checked). With ``outputs`` None, conclusions are not
    checked: what was printed is unknown.
    """
    if control is None:
        return 0, []
    keys = known_variables(activation, extra_variables)
    committed = {str(e.get("id")) for e in activation.observation.committed_index}
    claims = 0
    bad: list[str] = []
    names: tuple[str, ...] = ()
    relations: tuple[Any, ...] = ()
    conclusions: tuple[str, ...] = ()
    if isinstance(control, A.UpdateState):
        names, conclusions = control.used_variables, control.conclusions
    elif isinstance(control, A.Repair):
        names = control.suspected_variables + tuple(
            v for e in control.evidence for v in e.variables
        )
    elif isinstance(control, A.FinalizeRelations | A.OpenState):
        relations = control.relations
    for name in dict.fromkeys(names):
        claims += 1
        if not _is_known(name, keys):
            bad.append(f"variable {name!r} is not in the lineage the view shows")
    for rel in relations:
        if rel.related_state_id is None:
            continue
        claims += 1
        if rel.related_state_id not in committed:
            bad.append(f"relation {rel.type} {rel.related_state_id}: not a committed state")
    if outputs is not None:
        for text in conclusions:
            claims += 1
            unseen = unseen_numbers(text, outputs)
            if unseen:
                bad.append(f"conclusion {text!r}: {', '.join(unseen)} not in any output")
    return claims, bad


_QUOTED = re.compile(r"`([^`]+)`")
_STEP = re.compile(r"\bstep (\d+)\b", re.IGNORECASE)


def _squash(code: str) -> str:
    return "".join(code.split())


def _fault_lines(fault: FaultInfo) -> list[str]:
    """Lines of the faulty code that the reference code does not have (whitespace-free)."""
    reference = {_squash(line) for line in fault.reference_code.splitlines()}
    lines = [_squash(line) for line in fault.faulty_code.splitlines()]
    return [line for line in lines if line and line not in reference]


def _points_at_code(repair: A.Repair, activation: Activation, fault: FaultInfo) -> bool:
    """The repair quotes the planted code, or names the step that runs it."""
    lines = _fault_lines(fault)
    if not lines:
        return False
    texts = [*repair.analytical_evidence, repair.error_hint, *(e.message for e in repair.evidence)]
    quoted = [_squash(q) for t in texts for q in _QUOTED.findall(t)]
    reference = _squash(fault.reference_code)
    for q in quoted:
        # a fragment only the faulty code has, or a whole faulty line
        if len(q) >= 4 and any((q in line and q not in reference) or line in q for line in lines):
            return True
    faulted_steps = {
        int(step["step"])
        for step in activation.observation.pending_steps
        if "step" in step
        and any(line in _squash("".join(step.get("code_head", ()))) for line in lines)
    }
    facts = [EvidenceFacts.of(e) for e in repair.evidence]
    steps = {int(n) for t in texts for n in _STEP.findall(t)} | {
        f.step for f in facts if f.step is not None
    }
    return bool(steps & faulted_steps)


def localized(repair: A.Repair, activation: Activation, fault: FaultInfo | None) -> bool:
    """Whether a repair points at the fault.

    It does when it suspects a variable the fault or the view's evidence names (any
    version), cites a check the view's evidence found, quotes the planted code (a
    backticked fragment of a faulty line the reference code does not have) or names
    the step that runs it (``step N``). With nothing to localize against (no fault, no
    evidence), any concrete evidence (a typed item or a failed check) counts.
    """
    targets: set[str] = set()
    if fault is not None:
        for v in (fault.variable, fault.read_version, fault.pre_version):
            if v:
                targets.add(VarKey.name_of(v))
    for ev in activation.evidence:
        targets.update(VarKey.name_of(v) for v in ev.variables)
    checks = {ev.check for ev in activation.evidence} | {
        t for ev in activation.evidence if (t := EvidenceFacts.of(ev).template)
    }
    named = {VarKey.name_of(v) for v in repair.suspected_variables}
    named |= {VarKey.name_of(v) for e in repair.evidence for v in e.variables}
    cited = set(repair.checks) | {e.check for e in repair.evidence}
    cited |= {t for e in repair.evidence if (t := EvidenceFacts.of(e).template)}
    if bool(named & targets) or bool(cited & checks):
        return True
    if fault is not None and _points_at_code(repair, activation, fault):
        return True
    if not targets and not checks and fault is None:
        return bool(repair.evidence or repair.checks)
    return False
