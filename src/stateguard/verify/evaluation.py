"""Verifier accuracy on a labelled step set, and Best-of-N selection among a turn's steps.

Metrics per verifier (invalid verdicts count as wrong and are reported apart):

- ``silent_error_recall``: of the steps labelled 0, the share scored 0;
- ``false_zero_rate``: of the steps labelled 1, the share scored 0;
- ``accuracy``: the share scored exactly their label.

Selection: per turn, the reference step and N-1 of its silently wrong variants. A
verifier picks a top-scored step (ties broken uniformly at random, seeded); majority
vote picks a step whose output is the most common (ties likewise); random picks any.
Rates are exact expectations over the tie-breaks (see `selection`).
Only turns with at least N-1 variants take part at size N.

A selector may also chain verifiers, ``deterministic>hybrid``: the first one's score
ranks, and the next one's only orders the steps the first one ties (the rules decide,
the model only breaks their ties).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.verify.chain import CHAIN
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
    silent_error_flagged: float | None = None
    """Of the steps labelled 0, the share scored 0 or 0.5 (doubted or refused)."""
    false_zero_rate: float | None
    """Of the steps labelled 1 (correct reference steps), the share scored 0."""
    accuracy: float | None
    invalid: int


def _share(num: float, den: int) -> float | None:
    return num / den if den else None


def metrics(steps: Sequence[LabelledStep], verifier: str) -> VerifierMetrics:
    """Confusion matrix and rates of ``verifier`` on ``steps``."""
    confusion = {lab: dict.fromkeys(PREDICTIONS, 0) for lab in LABELS}
    for s in steps:
        confusion[_key(s.label)][_key(s.verdicts[verifier].score)] += 1
    zeros, ones = confusion["0"], confusion["1"]
    right = sum(confusion[lab][lab] for lab in LABELS)
    return VerifierMetrics(
        steps=len(steps),
        confusion=confusion,
        silent_error_recall=_share(zeros["0"], sum(zeros.values())),
        silent_error_flagged=_share(zeros["0"] + zeros["0.5"], sum(zeros.values())),
        false_zero_rate=_share(ones["0"], sum(ones.values())),
        accuracy=_share(right, len(steps)),
        invalid=sum(c["invalid"] for c in confusion.values()),
    )


def recall_by_kind(
    steps: Sequence[LabelledStep], verifiers: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """Per verifier and mutation kind: the share of that kind's silent errors scored 0."""
    kinds = sorted({s.kind for s in steps if s.label == 0.0})
    out: dict[str, dict[str, float | None]] = {}
    for name in verifiers:
        out[name] = {}
        for kind in kinds:
            of = [s for s in steps if s.label == 0.0 and s.kind == kind]
            out[name][kind] = _share(sum(1 for s in of if s.verdicts[name].score == 0.0), len(of))
    return out


class SelectionResult(BaseModel):
    """How often each selector picks the reference step, at one N."""

    model_config = ConfigDict(frozen=True)

    n: int
    turns: int
    picked_correct: dict[str, float | None]
    """selector (a verifier, ``majority``, ``random``) -> share of turns it picked the reference."""
    outranked: dict[str, float | None] = {}
    """verifier -> share of pools where a wrong step scored above the reference (the rest of
    its misses are ties: wrong steps scored as high as the reference)."""


def _rank(step: LabelledStep, selector: str) -> tuple[float, ...]:
    """The step's sort key under ``selector``: its scores by each chained verifier, an
    invalid verdict below every score; then the fewer findings against it by the first
    (`StepVerdict.against`), so that ties are broken by evidence counts."""
    names = selector.split(CHAIN)
    scores = tuple(-1.0 if (x := step.verdicts[n].score) is None else x for n in names)
    return (*scores, -float(step.verdicts[names[0]].against))


def _chance(pool: Sequence[object], i: int = 0) -> float:
    """The chance that a uniform tie-break among the best of ``pool`` picks ``pool[i]``."""
    best = max(pool)  # type: ignore[type-var]
    tied = sum(1 for x in pool if x == best)
    return 1.0 / tied if pool[i] == best else 0.0


def selection(
    steps: Sequence[LabelledStep],
    verifiers: Sequence[str],
    sizes: Sequence[int] = (4, 8, 16),
    seed: int = 0,
    draws: int = 20,
    same_turns: bool = False,
) -> list[SelectionResult]:
    """Best-of-N selection rates (see the module docstring).

    Per turn, ``draws`` pools of N-1 wrong variants are drawn (seeded; one pool when the
    turn has exactly N-1); each selector's rate is its exact chance of picking the
    reference over the uniform tie-break, averaged over the pools and then the turns.
    ``same_turns``: every N uses only the turns that have enough variants for the largest N,
    so that the rates at different N compare the same turns.
    """
    turns: dict[tuple[str, int], list[LabelledStep]] = defaultdict(list)
    for s in steps:
        if s.kind != "exploration":
            turns[(s.session, s.turn)].append(s)
    names = [*verifiers, "majority", "random"]
    out = []
    for n in sizes:
        rng = random.Random(seed)
        hits = dict.fromkeys(names, 0.0)
        below = dict.fromkeys(verifiers, 0.0)
        used = 0
        for group in turns.values():
            ref = [s for s in group if s.label == 1.0]
            wrong = [s for s in group if s.label == 0.0]
            need = (max(sizes) if same_turns else n) - 1
            if not ref or len(wrong) < need:
                continue
            used += 1
            k = 1 if len(wrong) == n - 1 else draws
            for _ in range(k):
                pool = [ref[0], *rng.sample(wrong, n - 1)]
                for name in verifiers:
                    scores = [_rank(s, name) for s in pool]
                    hits[name] += _chance(scores) / k
                    below[name] += (scores[0] < max(scores)) / k
                counts = Counter(s.output for s in pool)
                hits["majority"] += _chance([counts[s.output] for s in pool]) / k
                hits["random"] += 1.0 / n / k
        out.append(
            SelectionResult(
                n=n,
                turns=used,
                picked_correct={k: _share(hits[k], used) for k in names},
                outranked={k: _share(below[k], used) for k in verifiers},
            )
        )
    return out
