"""Per-trajectory aggregation of step verdicts.

Invalid verdicts are left out of the aggregate (they are not evidence either way) and
counted apart; a trajectory whose every verdict is invalid (or that has none) gets
None, which ranks below every scored trajectory. The default is ``min``: a trajectory
is as good as its worst step, so one fatal step sinks it while a corrected
exploration error (0.5) only lowers it.

Paths are ranked by their aggregate, then by the mean of their step scores (under
``min`` many paths tie at 0: the one that also did something right ranks first), then,
with a chained verifier (`stateguard.verify.chain`, which adds a tiebreak score to each
verdict), by the same aggregate of their tiebreaks (`path_rank`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from stateguard.verify.models import StepVerdict

Aggregate = Literal["min", "mean", "product", "last"]
AGGREGATES: tuple[Aggregate, ...] = ("min", "mean", "product", "last")
DEFAULT_AGGREGATE: Aggregate = "min"


def aggregate(verdicts: Sequence[StepVerdict], how: Aggregate = DEFAULT_AGGREGATE) -> float | None:
    """The trajectory's score from its valid step scores; None when there is none."""
    return combine([v.score for v in verdicts if v.score is not None], how)


def tiebreak(verdicts: Sequence[StepVerdict], how: Aggregate = DEFAULT_AGGREGATE) -> float | None:
    """The aggregate of the verdicts' tiebreak scores (a chained verifier's second
    verifier, `stateguard.verify.chain`); None when there is none."""
    return combine([v.tiebreak for v in verdicts if v.tiebreak is not None], how)


def combine(scores: Sequence[float], how: Aggregate = DEFAULT_AGGREGATE) -> float | None:
    """``scores`` aggregated by ``how``; None when there is none."""
    if not scores:
        return None
    if how == "min":
        return min(scores)
    if how == "mean":
        return sum(scores) / len(scores)
    if how == "product":
        return math.prod(scores)
    if how == "last":
        return scores[-1]
    raise ValueError(f"unknown aggregate {how!r}; expected one of {AGGREGATES}")


def rank_key(score: float | None) -> float:
    """Sort key: higher is better, None below everything."""
    return -1.0 if score is None else score


def path_rank(
    verdicts: Sequence[StepVerdict], how: Aggregate = DEFAULT_AGGREGATE
) -> tuple[float, float, float, float]:
    """Sort key of a path (higher is better): its aggregate; then the mean of its step
    scores, so that of two paths whose worst step is as bad, the one with better steps
    otherwise wins; then the aggregate of its tiebreak scores; then the fewer findings
    against its steps (`StepVerdict.against`: evidence counts, not wording)."""
    return (
        rank_key(aggregate(verdicts, how)),
        rank_key(aggregate(verdicts, "mean")),
        rank_key(tiebreak(verdicts, how)),
        -float(sum(v.against for v in verdicts)),
    )
