"""Two verifiers as one selector: the first ranks, the second orders only what it ties.

On replays (BENCHMARKS.md) the deterministic layer never scores a silently wrong step
above its reference, but it ties some with it; the hybrid's model separates some of
those ties while, alone, it doubts many correct steps. ``deterministic>hybrid`` keeps
the rules' order and lets the model's verdict break their ties. A `ChainedVerifier`
returns the first verifier's verdict with the second's score as its ``tiebreak``; the
search strategies rank by the score, then by the tiebreak.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from stateguard.checks import Step
from stateguard.llm import ChatModel
from stateguard.verify.environment import Environment
from stateguard.verify.errors import VerifyError
from stateguard.verify.models import StepVerdict, VerifyTask
from stateguard.verify.verifier import VERIFIER_MODES, StepVerifier

CHAIN = ">"
"""Joins verifier names into one lexicographic selector (``deterministic>hybrid``)."""

SearchVerifier = Literal[
    "deterministic", "llm", "hybrid", "deterministic>hybrid", "deterministic>llm"
]
SEARCH_VERIFIERS: tuple[SearchVerifier, ...] = (
    "deterministic",
    "llm",
    "hybrid",
    "deterministic>hybrid",
    "deterministic>llm",
)
"""The verifiers a search can rank its candidates by."""


class ChainedVerifier:
    """``first``'s verdict, with ``then``'s score as the tiebreak (see the module)."""

    def __init__(self, first: StepVerifier, then: StepVerifier) -> None:
        self.first, self.then = first, then

    @property
    def mode(self) -> str:
        """The selector's name, ``first>then``."""
        return f"{self.first.mode}{CHAIN}{self.then.mode}"

    def verify(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int | None = None,
        env: Environment | None = None,
        verdicts: Sequence[StepVerdict | None] = (),
    ) -> StepVerdict:
        """The first verifier's verdict on ``steps[index]``, the second's score as tiebreak.
        When both read the same rules, the rules (and their probes) run once."""
        first, then = self.first, self.then
        shared = (
            "execution" not in (first.mode, then.mode)
            and first.rules == then.rules
            and first.probe_timeout == then.probe_timeout
        )
        if shared:
            steps = tuple(steps)
            i = first.step_index(steps, index)
            results, spent = first.rule_results(task, steps, i, env)
            lead = first.conclude(task, steps, i, env, verdicts, results, spent)
            tie = then.conclude(task, steps, i, env, verdicts, results)
        else:
            lead = first.verify(task, steps, index, env, verdicts)
            tie = then.verify(task, steps, index, env, verdicts)
        return lead.model_copy(
            update={
                "tiebreak": tie.score,
                "rounds": lead.rounds + tie.rounds,
                "probe_seconds": lead.probe_seconds + tie.probe_seconds,
            }
        )


def chain_parts(name: str) -> tuple[str, ...]:
    """The verifier modes of a selector name (``deterministic>hybrid``), checked: one or
    two known modes."""
    parts = tuple(p.strip() for p in name.split(CHAIN))
    if not 1 <= len(parts) <= 2 or any(p not in VERIFIER_MODES for p in parts):
        raise VerifyError(
            f"unknown verifier {name!r}: expected one of {VERIFIER_MODES}, or two of them "
            f"joined by {CHAIN!r} (deterministic{CHAIN}hybrid)"
        )
    return parts


def needs_model(name: str) -> bool:
    """Whether the selector ``name`` has an LLM part (``llm`` or ``hybrid``)."""
    return any(p in ("llm", "hybrid") for p in chain_parts(name))


def build_verifier(
    name: str, model: ChatModel | None = None, **options: object
) -> StepVerifier | ChainedVerifier:
    """The verifier, or chained verifier, that ``name`` names; ``model`` for its LLM
    parts; ``options`` go to each `StepVerifier` (``max_rounds``…)."""
    parts = chain_parts(name)
    built = [
        StepVerifier(p, model=model if p in ("llm", "hybrid") else None, **options)  # type: ignore[arg-type]
        for p in parts
    ]
    return built[0] if len(built) == 1 else ChainedVerifier(built[0], built[1])
