"""Ablation supervisors for benchmarks: a stateless window observer."""

from __future__ import annotations

import json

from stateguard.checks import Step
from stateguard.errors import ModelError
from stateguard.llm import ChatMessage, ChatModel
from stateguard.manager.events import WindowReview
from stateguard.manager.prompts import fill
from stateguard.manager.protocol import AnswerReview, Hint, ManagerEvent


class WindowObserver:
    """Sees only the last `window` steps at answer time; may emit one hint per turn."""

    def __init__(self, model: ChatModel | None, *, window: int = 3) -> None:
        self.model = model
        self.window = window
        self._steps: list[Step] = []
        self._turn = -1
        self._question = ""
        self._hinted = False
        self._calls = 0
        self._events: list[ManagerEvent] = []

    @property
    def llm_calls(self) -> int:
        """Model calls made so far."""
        return self._calls

    def begin_turn(self, turn: int, question: str, context: str = "") -> list[Hint]:
        """No memory across turns: nothing to say."""
        self._turn, self._question, self._hinted, self._steps = turn, question, False, []
        return []

    def after_step(self, view: Step) -> list[Hint]:
        """Remember only the window."""
        self._steps = [*self._steps, view][-self.window :]
        return []

    def review_answer(self, view: Step) -> AnswerReview:
        """At most one hint per turn, from the last steps only."""
        if self._hinted or self.model is None:
            return AnswerReview(accepted=True)
        steps = "\n".join(
            f"[{s.step}] {(s.code or '').strip()[:400]}\n-> "
            f"{(s.execution.stdout if s.execution else '')[-300:]}"
            for s in self._steps
        )
        self._calls += 1
        try:
            reply = self.model.complete(
                [
                    ChatMessage(
                        role="user",
                        content=fill(
                            "window_observer.md",
                            question=self._question,
                            answer=view.answer or "",
                            steps=steps or "(none)",
                        ),
                    )
                ],
                max_tokens=200,
            )
            start, end = reply.content.find("{"), reply.content.rfind("}")
            text = json.loads(reply.content[start : end + 1]).get("hint") if start >= 0 else None
        except (ModelError, ValueError, AttributeError, RecursionError):
            text = None
        self._events.append(ManagerEvent.of(WindowReview(hint=text), turn=self._turn))
        if not text:
            return AnswerReview(accepted=True)
        self._hinted = True
        hint = Hint(kind="repair", text=f"[observer note — reference only] {text}")
        return AnswerReview(accepted=False, hints=(hint,))

    def end_turn(self, turn: int, answer: str | None) -> None:
        """Nothing kept."""

    def drain_events(self) -> list[ManagerEvent]:
        """Events since the last call."""
        out, self._events = self._events, []
        return out
