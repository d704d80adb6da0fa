"""The hybrid policy (default): deterministic first, an LLM only for meaning.

Everything the deterministic layer can prove it decides alone. The model is
called (a) once per committed state to name its issue and conclusions, and
(b) to judge findings the deterministic layer marks ambiguous (e.g. an answer
number it could not find verbatim in any output). Calls are counted per turn.
"""

from __future__ import annotations

import json

from stateguard.errors import ModelError
from stateguard.llm import ChatMessage, ChatModel
from stateguard.manager.notes import Evidence
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.policies.deterministic import DeterministicPolicy, issue_from_question
from stateguard.manager.prompts import fill


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


class HybridPolicy(DeterministicPolicy):
    """Deterministic decisions; LLM calls only to name states and judge ambiguity."""

    name = "hybrid"

    def __init__(self, model: ChatModel | None, *, name_states: bool = True) -> None:
        self.model = model
        self.name_states = name_states
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
        self, found: list[Evidence], obs: Observation, ctx: PolicyContext
    ) -> list[Evidence]:
        """Certain findings stand; an ambiguous one stands only if the model says unsupported."""
        keep = [e for e in found if not e.ambiguous]
        steps = ctx.turn_steps if obs.event == "review" else ctx.pending_steps
        for e in (e for e in found if e.ambiguous):
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
                keep.append(
                    e.model_copy(
                        update={
                            "message": f"{e.message} ({verdict.get('reason', '')})".strip(),
                            "detail": str(verdict.get("reason", "")).strip(),
                            "ambiguous": False,
                        }
                    )
                )
        return keep

    def name_state(self, obs: Observation, ctx: PolicyContext) -> tuple[str, tuple[str, ...]]:
        """Ask the model for a short issue and conclusions; fall back to the deterministic ones."""
        issue, conclusions = super().name_state(obs, ctx)
        if not self.name_states or not obs.answer:
            return issue, conclusions
        named = self._ask(
            obs.turn,
            fill("hybrid_name.md", question=ctx.question, answer=obs.answer),
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
