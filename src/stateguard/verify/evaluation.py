"""Verifier accuracy on a labelled step set, and Best-of-N selection among a turn's steps.

Metrics per verifier (invalid verdicts count as wrong and are reported apart):

- ``silent_error_recall``: of the steps labelled 0, the share scored 0;
- ``false_zero_rate``: of the steps labelled 1, the share scored 0;
- ``accuracy``: the share scored exactly their label.

Selection: per turn, the reference step and N-1 of its silently wrong variants. A
verifier picks a top-scored step (ties broken uniformly at random, seeded); majority
vote picks a step whose output is the most common (ties likewise); random picks any.
Only turns with at least N-1 variants take part at size N.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.verify.labelling import LabelledStep

LABELS = ("0", "0.5", "1")
PREDICTIONS = ("0", "0.5", "1", "invalid")


def _key(score: float | None) -> str:
    return "invalid" if score is None else f"{score:g}"


class VerifierMetrics(BaseModel):
    """One verifier on the set."""

    model_config = ConfigDict(frozen=True)

    steps: int
    confusion: dict[str, dict[str, int]]
    """label -> prediction -> count."""
    silent_error_recall: float | None
    false_zero_rate: float | None
    accuracy: float | None
    invalid: int


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def metrics(steps: Sequence[LabelledStep], verifier: str) -> VerifierMetrics:
    """Confusion matrix and rates of ``verifier`` on ``steps``."""
    confusion = {lab: dict.fromkeys(PREDICTIONS, 0) for lab in LABELS}
    for s in steps:
        confusion[_key(s.label)][_key(s.verdicts[verifier].score)] += 1
    zeros, ones = confusion["0"], confusion["1"]
    right = sum(confusion[lab][lab] for lab in LABELS)
    return VerifierMetrics(
        steps=len(steps), confusion=confusion,
        silent_error_recall=_share(zeros["0"], sum(zeros.values())),
        false_zero_rate=_share(ones["0"], sum(ones.values())),
        accuracy=_share(right, len(steps)),
        invalid=sum(c["invalid"] for c in confusion.values()),
    )


class SelectionResult(BaseModel):
    """How often each selector picks the reference step, at one N."""

    model_config = ConfigDict(frozen=True)

    n: int
    turns: int
    picked_correct: dict[str, float | None]
    """selector (a verifier, ``majority``, ``random``) -> share of turns it picked the reference."""


def selection(steps: Sequence[LabelledStep], verifiers: Sequence[str], sizes: Sequence[int] = (
        4, 8, 16), seed: int = 0) -> list[SelectionResult]:
    """Best-of-N selection rates (see the module docstring)."""
    turns: dict[tuple[str, int], list[LabelledStep]] = defaultdict(list)
    for s in steps:
        if s.kind != "exploration":
            turns[(s.session, s.turn)].append(s)
    out = []
    for n in sizes:
        rng = random.Random(seed)
        hits: Counter[str] = Counter()
        used = 0
        for group in turns.values():
            ref = [s for s in group if s.label == 1.0]
            wrong = [s for s in group if s.label == 0.0]
            if not ref or len(wrong) < n - 1:
                continue
            used += 1
            pool = [ref[0], *rng.sample(wrong, n - 1)]
            for name in verifiers:
                scored = [(-1.0 if (x := s.verdicts[name].score) is None else x) for s in pool]
                best = [i for i, x in enumerate(scored) if x == max(scored)]
                hits[name] += rng.choice(best) == 0
            counts = Counter(s.output for s in pool)
            top = max(counts.values())
            hits["majority"] += rng.choice(
                [i for i, s in enumerate(pool) if counts[s.output] == top]) == 0
            hits["random"] += rng.randrange(n) == 0
        out.append(SelectionResult(
            n=n, turns=used,
            picked_correct={k: _share(hits[k], used) for k in [*verifiers, "majority", "random"]},
        ))
    return out
