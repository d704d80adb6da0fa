"""The worker constrains replies with the step grammar where the model takes one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatMessage, ChatResponse, ScriptedModel
from stateguard.llm.local import ANSWER_STEP_GRAMMAR, CODE_STEP_GRAMMAR, STEP_GRAMMAR
from stateguard.manager import NullSupervisor
from stateguard.worker.loop import Worker, _takes_grammar

FENCE = "```"
REPLIES = [f"Count.\n{FENCE}python\nprint(3)\n{FENCE}", "<answer>3</answer>"]


class GrammarModel:
    """A scripted model that takes a grammar, as the embedded backend does."""

    supports_grammar = True

    def __init__(self, replies: list[str]) -> None:
        self.name = "grammar-scripted"
        self.inner = ScriptedModel(replies)
        self.grammars: list[str | None] = []

    def complete(
        self, messages: Sequence[ChatMessage], *, grammar: str | None = None, **kw: Any
    ) -> ChatResponse:
        self.grammars.append(grammar)
        return self.inner.complete(messages, **kw)


@pytest.mark.kernel
def test_each_call_carries_the_step_grammar(tracked: TrackedSession) -> None:
    model = GrammarModel(REPLIES)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "Rows?"))
    assert events[-1].answer == "3"
    # code only before a cell ran in the turn (an answer would be refused), then either
    assert model.grammars == [CODE_STEP_GRAMMAR, STEP_GRAMMAR]


@pytest.mark.kernel
def test_no_grammar_when_switched_off_or_not_supported(tracked: TrackedSession) -> None:
    model = GrammarModel(REPLIES)
    guard = GuardedSession(tracked, manager=NullSupervisor())
    list(Worker(model, guard, constrain_replies=False).run_turn(1, "Rows?"))
    assert model.grammars == [None, None]
    plain = ScriptedModel(REPLIES)  # takes no grammar keyword: none is passed
    events = list(
        Worker(plain, GuardedSession(tracked, manager=NullSupervisor())).run_turn(1, "Rows?")
    )
    assert events[-1].answer == "3"


class ClaimsGrammar:
    """Says it takes a grammar (e.g. by forwarding attributes) but its complete does not."""

    supports_grammar = True
    name = "claims"

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None):
        raise AssertionError("not called")


def test_a_model_whose_complete_takes_no_grammar_gets_none() -> None:
    assert _takes_grammar(GrammarModel(REPLIES))
    assert not _takes_grammar(ClaimsGrammar())
    assert not _takes_grammar(ScriptedModel(REPLIES))


@pytest.mark.kernel
def test_after_a_refused_answer_the_next_reply_must_be_code(tracked: TrackedSession) -> None:
    replies = [
        f"Count.\n{FENCE}python\nprint(3)\n{FENCE}",
        "<answer>4711</answer>",  # a number no output showed: refused
        f"Again.\n{FENCE}python\nprint(3 + 0)\n{FENCE}",
        "<answer>3</answer>",
    ]
    model = GrammarModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), max_steps_per_turn=6)
    events = list(worker.run_turn(1, "Rows?"))
    assert events[-1].answer == "3"
    assert model.grammars == [CODE_STEP_GRAMMAR, STEP_GRAMMAR, CODE_STEP_GRAMMAR, STEP_GRAMMAR]


@pytest.mark.kernel
def test_the_last_step_may_answer_even_after_a_refusal(tracked: TrackedSession) -> None:
    replies = [
        f"Count.\n{FENCE}python\nprint(3)\n{FENCE}",
        "<answer>4711</answer>",
        "<answer>3</answer>",
    ]
    model = GrammarModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), max_steps_per_turn=3)
    assert list(worker.run_turn(1, "Rows?"))[-1].answer == "3"
    assert model.grammars[-1] == STEP_GRAMMAR


@pytest.mark.kernel
def test_a_stalled_turns_last_reply_may_only_answer(tracked: TrackedSession) -> None:
    replies = [
        f"Count.\n{FENCE}python\nprint(3)\n{FENCE}",
        f"More.\n{FENCE}python\nprint(undefined_a)\n{FENCE}",
        f"More.\n{FENCE}python\nprint(undefined_b)\n{FENCE}",
        "<answer>3</answer>",
    ]
    model = GrammarModel(replies)
    worker = Worker(
        model,
        GuardedSession(tracked, manager=NullSupervisor()),
        max_steps_per_turn=10,
        no_progress_limit=2,
        retry_samples=0,
    )
    assert list(worker.run_turn(1, "Rows?"))[-1].answer == "3"
    assert model.grammars == [CODE_STEP_GRAMMAR, STEP_GRAMMAR, STEP_GRAMMAR, ANSWER_STEP_GRAMMAR]
