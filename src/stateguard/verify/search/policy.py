"""Candidate next steps from a policy model (any `ChatModel`), parsed like the worker's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.llm import ChatMessage, ChatModel
from stateguard.verify.models import VerifyTask
from stateguard.worker.loop import READ_ONLY_DATA, system_prompt
from stateguard.worker.parsing import parse_reply


class Proposal(BaseModel):
    """A candidate step: code to run, or an answer (then ``code`` is None)."""

    model_config = ConfigDict(frozen=True)

    thought: str = ""
    code: str | None = None
    answer: str | None = None


class Policy(Protocol):
    """Proposes candidate next steps for a trajectory."""

    def propose(self, task: VerifyTask, steps: Sequence[Step], n: int) -> list[Proposal]:
        """``n`` candidates for the step after ``steps``."""
        ...


def _as_reply(step: Step) -> str:
    if step.code is not None:
        return f"{step.thought}\n```python\n{step.code}\n```".strip()
    return f"{step.thought}\n<answer>{step.answer or ''}</answer>".strip()


class ModelPolicy:
    """Samples candidates from a chat model with the worker's prompt and reply format.

    A reply the worker's parser rejects (no code, two blocks…) is re-sampled, at most
    ``retries`` times per candidate; after that the candidate is an empty code step
    ``pass`` that the verifier will not reward.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float = 0.8,
        max_tokens: int = 768,
        retries: int = 2,
        data_files: str = "",
        max_steps: int = 20,
        data_dir: str = READ_ONLY_DATA,
    ) -> None:
        """``temperature`` > 0 so that candidates differ; ``data_files`` and ``data_dir`` as
        for the worker (`stateguard.worker.loop.system_prompt`)."""
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.retries = retries
        self.system = system_prompt(data_files, max_steps, data_dir=data_dir)

    def messages(self, task: VerifyTask, steps: Sequence[Step]) -> list[ChatMessage]:
        """The conversation so far, as the worker would have had it."""
        opener = (
            f"Context:\n{task.context}\n\n" if task.context else ""
        ) + f"Question (turn 1):\n{task.question}"
        msgs = [ChatMessage.system(self.system), ChatMessage(role="user", content=opener)]
        for step in steps:
            msgs.append(ChatMessage(role="assistant", content=_as_reply(step)))
            if step.code is not None:
                msgs.append(ChatMessage(role="user", content=step.observation or "(no output)"))
        return msgs

    def propose(self, task: VerifyTask, steps: Sequence[Step], n: int) -> list[Proposal]:
        """``n`` sampled candidates."""
        msgs = self.messages(task, steps)
        code_ran = any(s.code is not None for s in steps)
        out = []
        for _ in range(n):
            for _ in range(self.retries + 1):
                reply = self.model.complete(
                    msgs, max_tokens=self.max_tokens, temperature=self.temperature
                )
                parsed = parse_reply(reply.content, code_ran=code_ran)
                if parsed.problem is None:
                    out.append(
                        Proposal(
                            thought=parsed.thought,
                            code=parsed.code,
                            answer=None if parsed.code else parsed.answer,
                        )
                    )
                    break
            else:
                out.append(Proposal(thought="(no valid step)", code="pass"))
        return out
