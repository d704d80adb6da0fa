"""The hybrid policy (default): deterministic first, an LLM only where evidence is ambiguous.

Everything the deterministic layer can prove it decides alone, and it names states
alone too: the issue is the question's first sentence, the conclusions are the
accepted answer and the values the turn's cells printed (`deterministic_name`).
The model is called only

* to judge findings the deterministic layer marks ambiguous (e.g. an answer number
  it could not find verbatim in any output), and
* to name a state whose question gives no issue (blank), from its answer.

``naming="llm"`` restores the former behaviour, one naming call per committed
state, for comparison (``benchmarks/hybrid_llm_calls.py``). Calls are counted per turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal

from stateguard.checks import Step
from stateguard.errors import ModelError
from stateguard.finding import Finding
from stateguard.llm import ChatMessage, ChatModel
from stateguard.manager.notes import EvidenceFacts
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.policies.deterministic import DeterministicPolicy, issue_from_question
from stateguard.manager.prompts import fill
from stateguard.question import first_sentence

Naming = Literal["evidence", "llm"]
"""How states are named: from the evidence, the LLM only when it is ambiguous; or always
by the LLM (the former behaviour)."""

_HAS_NUMBER = re.compile(r"\d")
_ISSUE_CHARS = 160
_CONCLUSION_CHARS = 200
_PRINTED_LINES = 2


def _json_object(text: str) -> dict:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except RecursionError:
        raise ValueError("the JSON object is nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError("not an object")
    return data


def issue_line(question: str) -> str:
    """The state's issue from its question: the question, or its first sentence when the
    whole would be cut ("" for a blank question)."""
    text = " ".join((question or "").split())
    if not text:
        return ""
    if len(text) > _ISSUE_CHARS:
        first = first_sentence(text)
        text = first if len(first) >= 12 else text
    return issue_from_question(text)


def _short(text: str, limit: int = _CONCLUSION_CHARS) -> str:
    line = " ".join(text.split())
    return (line[: limit - 1] + "…") if len(line) > limit else line


def printed_values(steps: Sequence[Step], limit: int = _PRINTED_LINES) -> list[str]:
    """The last short lines with a number that the steps' successful cells printed or showed
    (newest last)."""
    lines: list[str] = []
    for s in steps:
        ex = s.execution
        if ex is None or not ex.ok:
            continue
        for text in (ex.stdout, ex.result or ""):
            for raw in text.splitlines():
                line = raw.strip()
                if line and _HAS_NUMBER.search(line) and len(line) <= _CONCLUSION_CHARS:
                    lines.append(line)
    return list(dict.fromkeys(lines))[-limit:]


def deterministic_name(
    question: str, answer: str | None, steps: Sequence[Step]
) -> tuple[str, tuple[str, ...]]:
    """(issue, conclusions) from the question, the accepted answer and the printed values."""
    conclusions: list[str] = []
    if answer and answer.strip():
        conclusions.append(_short(answer.strip()))
    for line in printed_values(steps):
        if not any(line in c or c in line for c in conclusions):
            conclusions.append(f"printed: {_short(line)}")
    return issue_line(question) or "(no question)", tuple(conclusions[:3])


class HybridPolicy(DeterministicPolicy):
    """Deterministic decisions and names; LLM calls only on ambiguous evidence."""

    name = "hybrid"

    def __init__(
        self, model: ChatModel | None, *, name_states: bool = True, naming: Naming = "evidence"
    ) -> None:
        """``name_states=False`` never asks the model for a name; ``naming`` see the module."""
        self.model = model
        self.name_states = name_states
        self.naming: Naming = naming
        self._calls = 0
        self.calls_by_turn: dict[int, int] = {}

    @property
    def llm_calls(self) -> int:  # type: ignore[override]
        """Model calls made so far."""
        return self._calls

    def _ask(self, turn: int, prompt: str, schema: dict) -> dict | None:
        if self.model is None:
            return None
        self._calls += 1
        self.calls_by_turn[turn] = self.calls_by_turn.get(turn, 0) + 1
        try:
            reply = self.model.complete(
                [ChatMessage(role="user", content=prompt)], max_tokens=300, json_schema=schema
            )
            return _json_object(reply.content)
        except (ModelError, ValueError):
            return None

    def decide_evidence(
        self, found: list[Finding], obs: Observation, ctx: PolicyContext
    ) -> list[Finding]:
        """Certain findings stand; an ambiguous one stands only if the model says unsupported
        (severity does not decide it, as in `DeterministicPolicy.decide_evidence`)."""
        keep = [e for e in found if not EvidenceFacts.of(e).ambiguous]
        # the judge reads what the agent saw printed in the whole turn, as the check did
        steps = ctx.pending_steps
        if obs.event == "review":
            steps = ctx.this_turn_steps or ctx.turn_steps
        for e in (e for e in found if EvidenceFacts.of(e).ambiguous):
            outputs = "\n".join(
                (s.execution.stdout + (s.execution.result or ""))[-600:]
                for s in steps
                if s.execution is not None and s.execution.ok
            )[-3000:]
            verdict = self._ask(
                obs.turn,
                fill(
                    "hybrid_judge.md",
                    question=ctx.question,
                    answer=obs.answer or "",
                    finding=e.message,
                    outputs=outputs or "(none)",
                ),
                {
                    "type": "object",
                    "properties": {
                        "verdict": {"type": "string", "enum": ["supported", "unsupported"]},
                        "reason": {"type": "string"},
                    },
                    "required": ["verdict"],
                },
            )
            if verdict is not None and verdict.get("verdict") == "unsupported":
                facts = {k: v for k, v in e.facts.items() if k not in ("ambiguous", "detail")}
                reason = str(verdict.get("reason", "")).strip()
                if reason:
                    facts["detail"] = reason
                keep.append(
                    e.model_copy(
                        update={
                            "message": f"{e.message} ({verdict.get('reason', '')})".strip(),
                            "facts": facts,
                        }
                    )
                )
        return keep

    def naming_ambiguous(self, obs: Observation, ctx: PolicyContext) -> bool:
        """Whether the evidence cannot name the state: an answer, but no question to take the
        issue from (with ``naming="llm"``: whenever there is an answer)."""
        if not obs.answer or not obs.answer.strip():
            return False
        return self.naming == "llm" or not issue_line(ctx.question)

    def name_state(self, obs: Observation, ctx: PolicyContext) -> tuple[str, tuple[str, ...]]:
        """The deterministic name; the model's only where the evidence is ambiguous."""
        steps = ctx.turn_steps if obs.event == "review" else ctx.pending_steps
        issue, conclusions = deterministic_name(ctx.question, obs.answer, steps)
        if not self.name_states or not self.naming_ambiguous(obs, ctx):
            return issue, conclusions
        named = self._ask(
            obs.turn,
            fill("hybrid_name.md", question=ctx.question, answer=obs.answer or ""),
            {
                "type": "object",
                "properties": {
                    "issue": {"type": "string"},
                    "conclusions": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["issue"],
            },
        )
        if not named or not str(named.get("issue", "")).strip():
            return issue, conclusions
        got = named.get("conclusions") or []
        concl = tuple(str(c) for c in got[:3] if str(c).strip()) if isinstance(got, list) else ()
        return issue_from_question(str(named["issue"])), concl or conclusions
