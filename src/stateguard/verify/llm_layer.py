"""The environment-aware LLM layer: a bounded multi-round verifier over fork probes.

Round by round the model either asks for a check (one python block, run by
`Environment.probe` on a copy of the namespace, its output sent back) or concludes
with a score. Earlier verdicts of the trajectory are part of the prompt; the final
step gets its own rule. A reply that is neither, a score outside {0, 0.5, 1}, running
out of rounds and a failing model all give an *invalid* verdict naming the reason.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from stateguard.checks import Step
from stateguard.errors import ModelError
from stateguard.finding import Finding
from stateguard.llm import ChatMessage, ChatModel
from stateguard.verify.environment import Environment
from stateguard.verify.models import InvalidReason, StepVerdict, VerifyTask
from stateguard.verify.parsing import parse_verifier_reply
from stateguard.verify.prompts import load

_CHARS = 1500


def _clip(text: str, n: int = _CHARS) -> str:
    text = text or ""
    return text if len(text) <= n else text[: n // 2] + "\n…\n" + text[-n // 2 :]


def describe_step(step: Step) -> str:
    """A step as the verifier reads it: reasoning, code, observation, answer."""
    parts = []
    if step.thought.strip():
        parts.append(f"Reasoning: {_clip(step.thought, 600)}")
    if step.code:
        parts.append(f"Code:\n```python\n{_clip(step.code)}\n```")
        parts.append(f"Observation:\n{_clip(step.observation)}")
    if step.answer is not None:
        parts.append(f"Answer: {_clip(step.answer, 600)}")
    return "\n".join(parts) or "(an empty step)"


def _history(steps: Sequence[Step], verdicts: Sequence[StepVerdict | None]) -> str:
    lines = []
    for i, step in enumerate(steps):
        v = verdicts[i] if i < len(verdicts) else None
        head = f"[step {i}]"
        if v is not None:
            score = f"{v.score:g}" if v.score is not None else f"invalid ({v.invalid})"
            head += f" earlier verdict {score}: {v.rationale[:200]}"
        lines.append(f"{head}\n{describe_step(step)}")
    return "\n\n".join(lines) or "(none)"


class LLMLayer:
    """Scores a step with a chat model that may probe the environment (bounded rounds)."""

    def __init__(
        self,
        model: ChatModel,
        *,
        max_rounds: int = 3,
        max_tokens: int = 512,
        probe_timeout: float = 30.0,
    ) -> None:
        """``max_rounds`` bounds the checks; one more call may conclude after the last."""
        if max_rounds < 0:
            raise ValueError(f"max_rounds must be >= 0, got {max_rounds}")
        self.model = model
        self.max_rounds = max_rounds
        self.max_tokens = max_tokens
        self.probe_timeout = probe_timeout

    def messages(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int,
        facts: Sequence[Finding],
        verdicts: Sequence[StepVerdict | None],
    ) -> list[ChatMessage]:
        """The opening conversation for step ``index``."""
        system = load("system.md").format(max_rounds=self.max_rounds)
        step = steps[index]
        if step.final or step.answer is not None:
            system += "\n" + load("final_step.md")
        user = load("step.md").format(
            question=task.question,
            context=f"Context: {task.context}\n" if task.context else "",
            history=_history(steps[:index], verdicts),
            index=index,
            step=describe_step(step),
            facts="\n".join(f"- {e.check} ({e.severity}): {e.message}" for e in facts) or "(none)",
        )
        return [ChatMessage.system(system), ChatMessage(role="user", content=user)]

    def judge(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int,
        env: Environment | None,
        facts: Sequence[Finding] = (),
        verdicts: Sequence[StepVerdict | None] = (),
    ) -> StepVerdict:
        """Run the rounds; always returns a verdict (invalid when no score can be trusted)."""
        messages = self.messages(task, steps, index, facts, verdicts)
        evidence = list(facts)
        probe_s = 0.0
        for round_no in range(self.max_rounds + 1):
            try:
                reply = self.model.complete(messages, max_tokens=self.max_tokens)
            except ModelError as exc:
                return self._invalid("model_error", str(exc), evidence, round_no, probe_s)
            parsed = parse_verifier_reply(reply.content)
            if parsed.kind == "conclusion":
                assert parsed.score is not None
                return StepVerdict(
                    score=parsed.score,
                    rationale=parsed.summary or "(no summary)",
                    evidence=tuple(evidence),
                    layer="llm",
                    rounds=round_no + 1,
                    probe_seconds=probe_s,
                )
            if parsed.kind == "invalid":
                assert parsed.invalid is not None
                return self._invalid(parsed.invalid, parsed.detail, evidence, round_no + 1, probe_s)
            if round_no == self.max_rounds:
                break
            assert parsed.code is not None
            if env is None:
                observation = "(no live environment for this step: conclude from the record)"
            else:
                started = time.perf_counter()
                res = env.probe(parsed.code, timeout=self.probe_timeout)
                probe_s += time.perf_counter() - started
                observation = (
                    "\n".join(
                        x
                        for x in (
                            res.stdout,
                            res.result or "",
                            f"{res.error.ename}: {res.error.evalue}" if res.error else "",
                        )
                        if x
                    )
                    or "(no output)"
                )
                evidence.append(
                    Finding(
                        check="probe",
                        severity="note",
                        message=_clip(f"{parsed.code.strip()} -> {observation}", 400),
                        basis=("data",),
                    )
                )
            messages += [
                ChatMessage(role="assistant", content=reply.content),
                ChatMessage(role="user", content=f"Output:\n{_clip(observation)}"),
            ]
        return self._invalid(
            "rounds_exhausted",
            f"no score after {self.max_rounds} checks",
            evidence,
            self.max_rounds + 1,
            probe_s,
        )

    @staticmethod
    def _invalid(
        reason: InvalidReason,
        detail: str,
        evidence: Sequence[Finding],
        rounds: int,
        probe_s: float,
    ) -> StepVerdict:
        return StepVerdict(
            invalid=reason,
            invalid_detail=detail,
            rationale=f"no valid score: {reason}",
            evidence=tuple(evidence),
            layer="llm",
            rounds=rounds,
            probe_seconds=probe_s,
        )
