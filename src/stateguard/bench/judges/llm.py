"""Optional LLM judge for free-text answers.

The prompt is the package data file ``bench/prompts/llm_judge.md`` (sections
``=== system ===``, ``=== user ===`` and ``=== retry ===``; ``$question``, ``$field``,
``$gold`` and ``$prediction`` are substituted once). The reply must contain
``VERDICT: 1`` or ``VERDICT: 0`` (the last one counts). An unparseable reply is retried
with the retry message, at most ``max_retries`` times; after that the field is judged
``excluded`` and counted in ``LLMJudge.excluded``. Model errors propagate.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from string import Template
from typing import Any

from stateguard.bench.judges.base import Judgement
from stateguard.llm import ChatMessage, ChatModel

_VERDICT = re.compile(r"VERDICT\s*:\s*\**\s*([01])\b", re.IGNORECASE)
_SECTION = re.compile(r"^=== (\w+) ===\s*$", re.MULTILINE)


def load_prompt_sections(name: str = "llm_judge.md") -> dict[str, str]:
    """Read a sectioned prompt file from ``stateguard.bench.prompts``."""
    text = resources.files("stateguard.bench.prompts").joinpath(name).read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, name1, body1, name2, body2, ...]
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def parse_verdict(reply: str | None) -> bool | None:
    """The last ``VERDICT: 0|1`` in ``reply`` as a bool, or None when there is none."""
    found = _VERDICT.findall(reply or "")
    return None if not found else found[-1] == "1"


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


class LLMJudge:
    """Binary LLM judgement of a free-text answer, with bounded retries.

    Counters: ``calls`` (model calls made), ``judged`` (judgements returned) and
    ``excluded`` (judgements with no parseable verdict).
    """

    def __init__(self, model: ChatModel, max_retries: int = 2, **complete_kwargs: Any) -> None:
        """``model`` is any `stateguard.llm.ChatModel`; ``complete_kwargs`` go to each call."""
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.model = model
        self.max_retries = max_retries
        self.complete_kwargs = complete_kwargs
        self.sections = load_prompt_sections()
        self.calls = 0
        self.judged = 0
        self.excluded = 0

    def judge(
        self, question: str, gold: Any, prediction: Any, field: str | None = None
    ) -> Judgement:
        """Ask the model whether ``prediction`` means the same as ``gold``."""
        user = Template(self.sections["user"]).safe_substitute(
            question=question or "(not given)",
            field=field or "(whole answer)",
            gold=_render(gold),
            prediction=_render(prediction),
        )
        messages = [ChatMessage.system(self.sections["system"]), ChatMessage.user(user)]
        replies: list[str] = []
        for attempt in range(self.max_retries + 1):
            if attempt:
                messages += [
                    ChatMessage.assistant(replies[-1]),
                    ChatMessage.user(self.sections["retry"]),
                ]
            self.calls += 1
            reply = self.model.complete(list(messages), **self.complete_kwargs).content or ""
            replies.append(reply)
            verdict = parse_verdict(reply)
            if verdict is not None:
                self.judged += 1
                return Judgement(
                    correct=verdict,
                    score=1.0 if verdict else 0.0,
                    details={"llm_calls": attempt + 1, "reply": reply},
                )
        self.judged += 1
        self.excluded += 1
        return Judgement(
            correct=False,
            score=0.0,
            excluded=True,
            details={"llm_calls": len(replies), "replies": replies, "reason": "no verdict"},
        )
