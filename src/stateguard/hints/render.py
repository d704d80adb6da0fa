"""Render the manager's typed notices into the text the agent reads.

A state notice becomes an ``<analytical_state_hint>`` block holding a JSON list of
``{id, issue, variables, conclusions, relations}`` and one fixed reference-only line;
a repair notice becomes an ``<error_hint>`` block with ``error_variable`` and
``faulty_reasoning``. The JSON list stays within ``max_chars``: conclusions, then
variables are shortened, then the oldest states dropped.
"""

from __future__ import annotations

import json
from string import Template
from typing import Any

from stateguard.finding import Finding
from stateguard.hints.templates import HintTemplates
from stateguard.manager import Hint
from stateguard.manager.notes import EvidenceFacts, RepairNotice, StateNote, StateNotice
from stateguard.types import VarKey

_SHORT_VARIABLES = 6
_SHORT_TEXT = 80


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class HintRenderer:
    """Turns notices into text with one set of templates."""

    def __init__(self, templates: HintTemplates | None = None, *, max_chars: int = 2000) -> None:
        self.templates = templates or HintTemplates.default()
        self.max_chars = max_chars

    # -- state notes ---------------------------------------------------------------
    def _entry(self, note: StateNote, level: int) -> dict[str, Any]:
        relations = list(note.relations)
        if note.invalidated_by:
            states = ", ".join(note.invalidated_by)
            if note.stale:
                more = len(note.stale) - 1
                states += f" ({note.stale[0]}" + (f", +{more} more" if more else "") + ")"
            relations.append(self.templates.fill("invalidated", states=states))
        elif note.stale:
            more = len(note.stale) - 1
            reason = note.stale[0] + (f", +{more} more" if more else "")
            relations.append(self.templates.fill("stale", reason=reason))
        variables = list(note.variables)
        issue = note.issue
        conclusions = list(note.conclusions)
        if level >= 1:
            conclusions = [_clip(c, _SHORT_TEXT) for c in conclusions[:2]]
            issue = _clip(issue, _SHORT_TEXT)
        if level >= 2:
            extra = len(variables) - _SHORT_VARIABLES
            variables = variables[:_SHORT_VARIABLES] + ([f"+{extra} more"] if extra > 0 else [])
            conclusions = []
        return {
            "id": note.id,
            "issue": issue,
            "variables": variables,
            "conclusions": conclusions,
            "relations": relations,
        }

    def states_json(self, notice: StateNotice) -> str:
        """The JSON list, within ``max_chars`` (newest states kept first)."""
        notes = list(notice.states)
        while notes:
            for level in (0, 1, 2):
                text = json.dumps([self._entry(n, level) for n in notes], ensure_ascii=False)
                if len(text) <= self.max_chars:
                    return text
            notes = notes[1:]
        return "[]"

    def state(self, notice: StateNotice) -> str:
        """The ``<analytical_state_hint>`` block."""
        return self.templates.fill("state", states=self.states_json(notice))

    # -- repair notes --------------------------------------------------------------
    def finding(self, e: Finding) -> str:
        """One finding in words: its template (``template`` of its facts, see
        `EvidenceFacts`) filled from its facts, else its own text."""
        f = EvidenceFacts.of(e)
        template = self.templates.evidence.get(f.template or "")
        if template is None:
            return e.message
        read = e.variables[0] if e.variables else ""
        superseded_by = f.superseding[0] if f.superseding else ""
        facts = {
            "step": "" if f.step is None else str(f.step),
            "read": read,
            "outdated": f.outdated or "",
            "name": VarKey.name_of(f.outdated or read),
            "superseded_by": superseded_by,
            "cell": "" if f.superseding_cell is None else str(f.superseding_cell),
            "numbers": ", ".join(f.numbers),
            "places": "" if f.places is None else str(f.places),
            "constraint": f.constraint or "",
        }
        text = Template(template).safe_substitute(facts).strip()
        if f.detail and "detail" in self.templates.evidence:
            text = Template(self.templates.evidence["detail"]).safe_substitute(
                finding=text, detail=f.detail
            )
        return text

    def _action(self, notice: RepairNotice) -> str:
        if notice.mode == "heavy" and notice.removed:
            return self.templates.fill("heavy", removed=", ".join(notice.removed))
        if notice.mode == "rollback":
            if notice.restored and notice.checkpoint:
                return self.templates.fill(
                    "rollback_restored",
                    restored=", ".join(notice.restored),
                    checkpoint=notice.checkpoint,
                )
            return self.templates.fill("rollback")
        return ""

    def repair(self, notice: RepairNotice) -> str:
        """The ``<error_hint>`` block."""
        reasons = [self.templates.reasons.get(c, c) for c in notice.checks]
        if notice.reasoning:
            reasons.append(notice.reasoning)
        parts = [*(self.finding(e) for e in notice.evidence), *dict.fromkeys(reasons)]
        reasoning = "; ".join(p.strip().rstrip(".") for p in parts if p.strip())
        suspects = ", ".join(notice.error_variables) or self.templates.no_suspects
        return self.templates.fill(
            "error",
            error_variable=suspects,
            faulty_reasoning=reasoning or self.templates.no_suspects,
            action=self._action(notice),
        )

    # -- hints -----------------------------------------------------------------------
    def render(self, hint: Hint) -> Hint:
        """``hint`` with its text rendered from its notice (free-form hints unchanged)."""
        notice = hint.notice
        if isinstance(notice, StateNotice):
            return hint.model_copy(update={"text": self.state(notice)})
        if isinstance(notice, RepairNotice):
            lines = tuple(self.finding(e) for e in notice.evidence)
            return hint.model_copy(update={"text": self.repair(notice), "evidence": lines})
        return hint
