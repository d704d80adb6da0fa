"""Plain sentences for what the report shows: manager events, why a turn has no answer.

Every manager event becomes one readable line (`event_text`); the raw event stays
available on the page behind a disclosure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stateguard.manager import ManagerEvent

_ACTIVATIONS = {
    "turn_start": "looked at the new question",
    "review": "reviewed the proposed answer",
    "segment": "looked at the steps so far",
}
_CONTROL = {
    "OPEN_STATE": "opened a draft state",
    "UPDATE_STATE": "updated the draft state",
    "FINALIZE_RELATIONS": "set the draft's relations to earlier states",
    "COMMIT_STATE": "committed the draft state",
    "REPAIR": "asked for a repair",
    "ABANDON_STATE": "abandoned the draft state",
    "RESUME_WORKER": "let the worker go on",
    "ABSTAIN": "abstained",
}
_TOOLS = {
    "check_execution": "checked the execution of a step",
    "inspect_python": "inspected code",
    "compile_python": "compiled code",
    "run_probe": "ran a probe on a copy of the session",
    "load_state": "loaded a stored state",
    "trace_lineage": "traced the lineage of a name",
}
NO_ANSWER = {
    "steps": "the step budget ran out",
    "tokens": "the token budget (the model's tokens in this turn) ran out",
    "time": "the time budget ran out",
    "no_progress": "the worker made no progress (failing or repeated steps), so the turn ended",
    "interrupt": "the run was interrupted",
    "answer": "no answer was accepted",
}
"""Why a turn has no answer, by `stateguard.worker.events.TurnEnd`."""
UNFINISHED = "the turn did not finish (the run stopped during it)"


def _clip(text: object, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _names(values: object, limit: int = 6) -> str:
    if not isinstance(values, list | tuple) or not values:
        return ""
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _control(action: Mapping[str, Any], result: str) -> str:
    kind = str(action.get("kind", ""))
    text = _CONTROL.get(kind) or _TOOLS.get(kind) or f"took the action {kind or '?'}"
    detail = ""
    if kind in ("OPEN_STATE", "UPDATE_STATE") and action.get("issue"):
        detail = f"“{_clip(action['issue'], 120)}”"
        if action.get("conclusions"):
            detail += f"; conclusions: {_clip('; '.join(map(str, action['conclusions'])), 120)}"
    elif kind == "REPAIR":
        detail = _clip("; ".join(map(str, action.get("analytical_evidence") or ())), 200)
    elif kind in ("ABANDON_STATE", "ABSTAIN") and action.get("reason"):
        detail = _clip(action["reason"])
    elif kind == "FINALIZE_RELATIONS":
        rels = action.get("relations") or []
        detail = _names([f"{r.get('type')} {r.get('related_state_id') or ''}".strip()
                         for r in rels if isinstance(r, Mapping)]) or "none"  # fmt: skip
    elif kind in ("run_probe", "inspect_python", "compile_python") and action.get("code"):
        detail = f"<{_clip(action['code'], 80)}>"
    elif kind in ("load_state", "trace_lineage"):
        detail = str(action.get("state_id") or action.get("name") or "")
    out = f"{text}: {detail}" if detail else text
    return f"{out} → {_clip(result, 120)}" if result else out


def event_text(event: ManagerEvent) -> str:
    """One sentence for ``event`` (see the module docstring)."""
    kind, d = event.payload.type, event.payload.data()
    if kind == "activation":
        what = _ACTIVATIONS.get(str(d.get("event")), f"was activated ({d.get('event')})")
        return what + (f" (draft {d['draft']})" if d.get("draft") else "")
    if kind in ("control", "tool_call"):
        action = d.get("action") if isinstance(d.get("action"), Mapping) else {}
        return _control(action, str(d.get("result") or ""))
    if kind == "illegal_action":
        action = d.get("action") if isinstance(d.get("action"), Mapping) else {}
        return f"tried {action.get('kind', 'an action')}, refused: {_clip(d.get('error', ''))}"
    if kind == "policy_error":
        return f"its policy failed: {_clip(d.get('error', ''))}"
    if kind == "activation_budget_exhausted":
        return f"stopped after {d.get('max_actions')} actions in one activation"
    if kind == "commit":
        state = d.get("state") if isinstance(d.get("state"), Mapping) else {}
        text = f"committed state {state.get('id', '?')}"
        if state.get("issue"):
            text += f": “{_clip(state['issue'], 120)}”"
        saved = _names(d.get("checkpoint"))
        return text + (f" (checkpoint of {saved})" if saved else "")
    if kind == "repair":
        text = f"repair {d.get('attempt')} of state {d.get('state')} ({d.get('mode')})"
        if d.get("removed"):
            text += f", removed {_names(d['removed'])}"
        if d.get("restored"):
            text += f", restored {_names(d['restored'])}"
        return text
    if kind == "rollback":
        restored = _names(d.get("restored"))
        return f"rolled state {d.get('state')} back" + (
            f", restored {restored}" if restored else ""
        )
    if kind == "abandon":
        return f"abandoned draft state {d.get('state')}: {_clip(d.get('reason', ''))}"
    if kind == "store_error":
        return f"the state store failed: {_clip(d.get('error', ''))}"
    if kind == "hint":
        states = _names(d.get("states"))
        return f"sent a {d.get('kind')} hint" + (f" about {states}" if states else "")
    if kind == "turn_end":
        answer = d.get("answer")
        return "closed the turn " + (
            f"with the answer “{_clip(answer, 100)}”" if answer else "without an answer"
        )
    if kind == "window_review":
        return f"reviewed the recent steps: {_clip(d.get('hint', ''))}"
    return f"logged a {getattr(event.payload, 'original_type', kind)} event"


def no_answer_text(ended: str | None, steps: int | None = None) -> str:
    """Why a turn has no answer (``ended`` None: the turn never finished)."""
    if ended is None:
        return UNFINISHED
    why = NO_ANSWER.get(ended, ended)
    if ended == "steps" and steps:
        why += f" ({steps} steps)"
    return why
