"""Search over the turns of a task: each turn is searched from the previous winner's state."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.verify.models import VerifyTask
from stateguard.verify.search.aggregate import DEFAULT_AGGREGATE, Aggregate
from stateguard.verify.search.branches import Branch, BranchFactory
from stateguard.verify.search.policy import Policy
from stateguard.verify.search.strategies import SearchResult, beam_search, best_of_n, dvts
from stateguard.verify.verifier import Verifier

Strategy = Literal["best-of-n", "beam", "dvts"]
STRATEGIES: tuple[Strategy, ...] = ("best-of-n", "beam", "dvts")


class TurnSearch(BaseModel):
    """One turn's search outcome."""

    model_config = ConfigDict(frozen=True)

    turn: int
    answer: str | None
    score: float | None
    candidates: int
    verifier_calls: int
    wall_time: float


class _Continue:
    """A factory whose root is a copy of an earlier winner's branch."""

    def __init__(self, inner: BranchFactory, start: Branch | None) -> None:
        self.inner, self.start = inner, start

    def root(self) -> Branch:
        return self.inner.root() if self.start is None else self.inner.child(self.start)

    def child(self, parent: Branch) -> Branch:
        return self.inner.child(parent)


def run_strategy(
    strategy: Strategy,
    task: VerifyTask,
    policy: Policy,
    verifier: Verifier,
    branches: BranchFactory,
    *,
    n: int,
    max_steps: int,
    how: Aggregate = DEFAULT_AGGREGATE,
) -> SearchResult:
    """One search: Best-of-N with N rollouts, beam of width 2 over N candidates, or DVTS with
    N split into subtrees of 2 candidates."""
    if strategy == "best-of-n":
        return best_of_n(task, policy, verifier, branches, n=n, max_steps=max_steps, how=how)
    if strategy == "beam":
        return beam_search(
            task,
            policy,
            verifier,
            branches,
            beam_width=min(2, n),
            candidates=n,
            max_steps=max_steps,
            how=how,
        )
    return dvts(
        task, policy, verifier, branches, n=max(n, 2), candidates=2, max_steps=max_steps, how=how
    )


def search_turns(
    turns: Sequence[VerifyTask],
    strategy: Strategy,
    policy: Policy,
    verifier: Verifier,
    branches: BranchFactory,
    *,
    n: int = 4,
    max_steps: int = 10,
    on_turn: Callable[[TurnSearch], None] | None = None,
) -> list[TurnSearch]:
    """Search each turn in order; the next turn starts from a copy of the winner's state."""
    out: list[TurnSearch] = []
    start: Branch | None = None
    try:
        for i, task in enumerate(turns, 1):
            began = time.monotonic()
            factory = _Continue(branches, start)
            result = run_strategy(
                strategy, task, policy, verifier, factory, n=n, max_steps=max_steps
            )
            if start is not None:
                start.close()
            start = result.branch
            item = TurnSearch(
                turn=i,
                answer=result.best.answer,
                score=result.best.score,
                candidates=len(result.candidates),
                verifier_calls=result.verifier_calls,
                wall_time=time.monotonic() - began,
            )
            out.append(item)
            if on_turn is not None:
                on_turn(item)
    finally:
        if start is not None:
            start.close()
    return out
