"""The LLM policy: the manager as a prompted model, one JSON action per message."""

from __future__ import annotations

import json

from pydantic import ValidationError

from stateguard.errors import ModelError
from stateguard.llm import ChatMessage, ChatModel
from stateguard.manager import actions as A
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.prompts import load

_KINDS = [
    *sorted(A.CONTROL_KINDS),
    "check_execution",
    "inspect_python",
    "compile_python",
    "run_probe",
    "load_state",
    "trace_lineage",
]
ACTION_SCHEMA = {
    "type": "object",
    "properties": {"kind": {"type": "string", "enum": _KINDS}},
    "required": ["kind"],
}


def observation_message(obs: Observation) -> str:
    """The user message that shows the policy an observation (the draft in compact form)."""
    payload = obs.model_dump(mode="json", exclude_none=True)
    if obs.draft is not None:
        d = obs.draft
        payload["draft"] = {
            "id": d.id,
            "issue": d.issue,
            "variables": [v.key for v in d.used_variables],
            "conclusions": list(d.conclusions),
            "relations": [r.summary for r in d.relations],
            "constraints": [c.text for c in d.constraints],
        }
    return "Observation:\n" + json.dumps(payload, indent=1)[:6000]


def result_message(result: str) -> str:
    """The user message that shows the policy the result of its last action."""
    return f"Result of your last action:\n{result}"


def conversation_key(obs: Observation) -> tuple[int, str, int | None]:
    """Observations with the same key and a last-action result continue one conversation."""
    return (obs.turn, obs.event, obs.pending_interval[1] if obs.pending_interval else None)


def action_message(action: A.ControlAction | A.ToolAction) -> str:
    """An action as the one JSON object a reply holds (fields left at defaults omitted)."""
    data = action.model_dump(mode="json", exclude_defaults=True)
    data.pop("kind", None)
    return json.dumps({"kind": action.kind, **data}, ensure_ascii=False)


def parse_action(text: str) -> A.ControlAction | A.ToolAction:
    """Parse one JSON action from a reply (a ```json fence or prose around it is tolerated)."""
    raw = text.strip()
    if "```" in raw:
        parts = raw.split("```")
        raw = parts[1] if len(parts) > 1 else raw
        raw = raw.removeprefix("json").strip()
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(raw[start : end + 1])
    except RecursionError:
        raise ValueError("the JSON object in the reply is nested too deeply") from None
    return A.ACTION_ADAPTER.validate_python(data)


class LLMPolicy:
    """Asks a chat model for each action; bounded corrective retries, then ABSTAIN."""

    name = "llm"

    def __init__(
        self,
        model: ChatModel,
        *,
        prompt: str = "llm_policy.md",
        max_retries: int = 2,
        max_tokens: int = 400,
    ) -> None:
        self.model = model
        self.system = load(prompt)
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self._calls = 0
        self.invalid_replies = 0
        self._history: list[ChatMessage] = []
        self._activation_key: tuple[int, str, int | None] | None = None

    @property
    def llm_calls(self) -> int:
        """Model calls made so far."""
        return self._calls

    def _user_message(self, obs: Observation) -> str:
        return observation_message(obs)

    def next_action(self, obs: Observation, ctx: PolicyContext) -> A.ControlAction | A.ToolAction:
        """Send the observation (or the last tool result) and parse one action."""
        key = conversation_key(obs)
        if key != self._activation_key or obs.last_action_result is None:
            self._activation_key = key
            self._history = [
                ChatMessage(role="system", content=self.system),
                ChatMessage(role="user", content=self._user_message(obs)),
            ]
        else:
            self._history.append(
                ChatMessage(role="user", content=result_message(obs.last_action_result))
            )
        return self.reply(self._history)

    def reply(self, history: list[ChatMessage]) -> A.ControlAction | A.ToolAction:
        """Ask for one action on ``history`` (appended to: replies and corrections)."""
        self._history = history
        for _attempt in range(self.max_retries + 1):
            self._calls += 1
            try:
                reply = self.model.complete(
                    self._history, max_tokens=self.max_tokens, json_schema=ACTION_SCHEMA
                )
            except ModelError as exc:
                return A.Abstain(reason=f"model failed: {exc}")
            self._history.append(ChatMessage(role="assistant", content=reply.content))
            try:
                return parse_action(reply.content)
            except (ValueError, ValidationError) as exc:
                self.invalid_replies += 1
                self._history.append(
                    ChatMessage(
                        role="user",
                        content=(
                            f"That reply is not one valid action ({str(exc)[:300]}). Reply with "
                            f'exactly one JSON object whose "kind" is one of: {", ".join(_KINDS)}.'
                        ),
                    )
                )
        return A.Abstain(reason="no valid action after corrective retries")
