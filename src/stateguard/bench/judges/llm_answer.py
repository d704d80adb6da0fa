"""LLM judge of whole answers, in the shape of LongDS's own evaluation.

One user message built from a template with three placeholders: ``{question}`` (the
turn's ``"{context}\nQuestion: {question}"``), ``{ground_truth}`` (a dict gold is
JSON-dumped, anything else ``str()``) and ``{solution}`` (the answer text). Only those
three are substituted, so a template may contain other braces (JSON examples). The
default template is the package data file ``bench/prompts/answer_judge.md``; a user
can load the benchmark's own with `AnswerJudge.from_file`.

The reply's score is the last ``<score>N</score>``; ``N >= 1`` is correct (the score
is clipped to [0, 1]). An unparseable reply is retried (the same request again) up to
``max_retries`` times; after that the turn is *excluded* and counted in
``AnswerJudge.unparseable``. An empty solution scores 0 without a model call.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from stateguard.bench.judges.base import Judgement
from stateguard.bench.tasks import BenchTurn
from stateguard.errors import TaskFormatError
from stateguard.llm import ChatMessage, ChatModel

PLACEHOLDERS = ("{question}", "{ground_truth}", "{solution}")
_SCORE = re.compile(r"<score>\s*([-+]?\d+(?:\.\d+)?)\s*</score>", re.IGNORECASE)


def default_template() -> str:
    """The shipped judge prompt."""
    return (
        resources.files("stateguard.bench.prompts")
        .joinpath("answer_judge.md")
        .read_text(encoding="utf-8")
    )


def parse_score(reply: str | None) -> float | None:
    """The last ``<score>N</score>`` in ``reply``, or None."""
    found = _SCORE.findall(reply or "")
    return float(found[-1]) if found else None


def judge_question(turn: BenchTurn) -> str:
    """What the judge is told was asked: ``"{context}\\nQuestion: {question}"``."""
    return f"{turn.context}\nQuestion: {turn.question}"


def render_gold(gold: Any) -> str:
    """A dict gold JSON-dumped, anything else ``str()``."""
    if isinstance(gold, dict):
        return json.dumps(gold, ensure_ascii=False, default=str)
    return str(gold)


class AnswerJudge:
    """Scores an answer against gold with a chat model (see the module docstring).

    Counters: ``calls`` (model calls), ``judged`` (verdicts returned, empty solutions
    included) and ``unparseable`` (turns excluded for want of a score).
    """

    def __init__(
        self,
        model: ChatModel,
        template: str | None = None,
        *,
        max_retries: int = 3,
        **complete_kwargs: Any,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.model = model
        self.template = default_template() if template is None else template
        missing = [p for p in PLACEHOLDERS if p not in self.template]
        if missing:
            raise TaskFormatError(f"judge prompt: placeholders {missing} are missing")
        self.max_retries = max_retries
        self.complete_kwargs = complete_kwargs
        self.calls = 0
        self.judged = 0
        self.unparseable = 0

    @classmethod
    def from_file(cls, model: ChatModel, path: Path | str, **kwargs: Any) -> AnswerJudge:
        """A judge whose prompt template is read from ``path``."""
        try:
            template = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise TaskFormatError(f"{path}: cannot read the judge prompt: {exc}") from exc
        return cls(model, template, **kwargs)

    def prompt(self, question: str, gold: Any, solution: str) -> str:
        """The user message for one judgement."""
        text = self.template
        for key, value in (
            ("{question}", question),
            ("{ground_truth}", render_gold(gold)),
            ("{solution}", solution),
        ):
            text = text.replace(key, value)
        return text

    def judge_turn(self, turn: BenchTurn, solution: str | None) -> Judgement:
        """Judge the answer text of one turn against its gold."""
        return self.judge(judge_question(turn), turn.gold, solution)

    def judge(self, question: str, gold: Any, solution: str | None) -> Judgement:
        """Score ``solution`` for ``question`` against ``gold``."""
        if solution is None or not str(solution).strip():
            self.judged += 1
            return Judgement(correct=False, score=0.0, details={"reason": "empty solution"})
        messages = [ChatMessage(role="user", content=self.prompt(question, gold, str(solution)))]
        replies: list[str] = []
        for _ in range(self.max_retries + 1):
            self.calls += 1
            reply = self.model.complete(list(messages), **self.complete_kwargs).content or ""
            replies.append(reply)
            score = parse_score(reply)
            if score is not None:
                self.judged += 1
                clipped = min(max(score, 0.0), 1.0)
                return Judgement(
                    correct=score >= 1,
                    score=clipped,
                    details={"judge": "llm", "llm_calls": len(replies), "reply": reply},
                )
        self.unparseable += 1
        return Judgement(
            correct=False,
            score=0.0,
            excluded=True,
            details={
                "judge": "llm",
                "reason": "no <score> in the judge's replies",
                "replies": replies,
            },
        )
