"""The forced correct action at one activation, from the known fault (not from a policy).

Rules (see `stateguard.train.records`):

* turn start: open the turn's state (the deterministic proposal: issue and constraints
  from the question);
* review of the faulted turn's first attempt: ``REPAIR``. When the deterministic checks
  localize the fault (stale reuse: lineage proves it) their repair is the label;
  otherwise the label names the faulty step, line and the variables it assigns, and
  says what kind of requirement the line breaks, without the correct code or answer;
* review of any other attempt (clean turns, and the redo after a repair): never
  ``REPAIR``; ``UPDATE_STATE``, ``FINALIZE_RELATIONS`` with the relations inferred from
  lineage, ``COMMIT_STATE`` (the deterministic proposal, with a repair replaced by the
  update it would have made).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.manager import actions as A
from stateguard.train.records import FaultInfo, LabelReason

_WHAT = {
    "dropped-constraint": "a filter or rounding requirement the question states is not applied",
    "flipped-comparison": "the comparison points the opposite way from what the question asks",
    "scope-change": "the category filter does not cover the scope the question asks about",
    "stale-reuse": "it reuses a value computed before an upstream revision",
}


class Label(BaseModel):
    """A forced action, the kinds that count as correct, and why."""

    model_config = ConfigDict(frozen=True)

    action: A.ControlAction
    kinds: tuple[str, ...]
    reason: LabelReason


def _line(code: str, lineno: int | None) -> str:
    lines = code.splitlines()
    if lineno is None or not 1 <= lineno <= len(lines):
        return ""
    return lines[lineno - 1].strip()


def assigned_names(code: str, lineno: int | None) -> tuple[str, ...]:
    """Names the top-level statement spanning ``lineno`` of ``code`` binds (or all, if None)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ()
    out: dict[str, None] = {}
    for stmt in tree.body:
        end = getattr(stmt, "end_lineno", stmt.lineno)
        if lineno is not None and not stmt.lineno <= lineno <= end:
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.setdefault(node.id)
    return tuple(out)


def fault_step(fault: FaultInfo, steps: Sequence[Step]) -> Step | None:
    """The step under review that ran the faulty code (the last one, if several)."""
    hits = [s for s in steps if s.code is not None and s.code == fault.faulty_code]
    return hits[-1] if hits else None


def fault_repair(fault: FaultInfo, steps: Sequence[Step]) -> A.Repair:
    """A repair localized on the planted fault, worded from what the worker's code shows."""
    step = fault_step(fault, steps)
    where = f"step {step.step}" if step is not None else f"turn {fault.turn_id}"
    what = _WHAT.get(fault.kind, "the step does not do what the question asks")
    if fault.kind == "stale-reuse" and fault.variable:
        alias = fault.alias
        msg = (
            f"{where} reads a copy of {fault.pre_version or fault.variable} taken before "
            f"turn {fault.revision_turn} revised {fault.variable}"
            + (f" ({alias})" if alias else "")
        )
        suspects: tuple[str, ...] = (fault.variable,)
    else:
        lineno = int(fault.node["line"]) if fault.node and "line" in fault.node else None
        shown = _line(fault.faulty_code, lineno)
        msg = f"{where}, line {lineno}: `{shown}`: {what}" if shown else f"{where}: {what}"
        suspects = assigned_names(fault.faulty_code, lineno) or assigned_names(
            fault.faulty_code, None
        )
    return A.Repair(
        analytical_evidence=(msg,),
        error_hint=what,
        suspected_variables=suspects,
    )


def force(
    proposal: A.ControlAction | A.ToolAction,
    *,
    event: str,
    faulted: bool,
    after_repair: bool,
    fault: FaultInfo | None,
    steps: Sequence[Step],
    has_draft: bool,
    draft_updated: bool,
    update: A.UpdateState,
) -> Label:
    """The forced action given the deterministic ``proposal`` (see the module docstring).

    ``update`` is the UPDATE_STATE the deterministic policy would make in this view (it
    replaces a repair the rules forbid).
    """
    if event == "turn_start":
        return Label(action=proposal, kinds=(proposal.kind,), reason="open-turn")  # type: ignore[arg-type]
    reason: LabelReason = "post-repair-commit" if after_repair else "clean-commit"
    if faulted and fault is not None:
        if has_draft and not draft_updated:
            if isinstance(proposal, A.Repair):
                return Label(action=proposal, kinds=("REPAIR",), reason="fault-repair")
            repair = fault_repair(fault, steps)
            return Label(action=repair, kinds=("REPAIR",), reason="fault-repair")
        reason = "fault-repair"
    if isinstance(proposal, A.Repair):
        return Label(action=update, kinds=("UPDATE_STATE",), reason=reason)
    if not A.is_control(proposal):
        return Label(action=update, kinds=("UPDATE_STATE",), reason=reason)
    return Label(action=proposal, kinds=(proposal.kind,), reason=reason)  # type: ignore[arg-type]
