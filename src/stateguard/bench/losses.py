"""What a run lost: the turns it recorded but did not score, counted by reason.

A turn is *not scored* when it was skipped (its task could not run here, its reference
code failed, the runner failed) or when the judge excluded it (the reference lacks what
a validator needs). `loss_category` folds a recorded reason into a short category so
that ``metrics.json`` can count them (``skipped_by_reason``); `losses` computes the
figures the console prints first. Turns the deterministic judge left undecided are not
lost: they are counted on their own (``turns_undecided``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from stateguard.bench.records import TurnResult

LOST_SHARE_LIMIT = 0.1
"""A run that does not score more than this share of its turns fails under ``--strict``."""

_LIBRARY = re.compile(r"needs the library '([^']+)'|No module named '([^'.]+)")
_EXCEPTION = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning))\b")


def missing_library(reason: str) -> str | None:
    """The library a reason says the kernel lacks (its top-level module), else None."""
    match = _LIBRARY.search(reason)
    return None if match is None else (match.group(1) or match.group(2))


def _exception(text: str) -> str:
    match = _EXCEPTION.search(text)
    return match.group(1) if match else "error"


def loss_category(reason: str | None) -> str:
    """A short category of why a turn was not scored (the key of ``skipped_by_reason``)."""
    text = (reason or "").strip()
    library = missing_library(text)
    if library:
        return f"missing library: {library}"
    if "missing input file" in text:
        return "missing input file"
    if "matching no file of the lake" in text:
        return "data source matching no file of the lake"
    if text.startswith("runner error"):
        return f"runner error: {_exception(text)}"
    if "refused the values" in text:
        return "values refused by the host"
    if text.startswith("reference code fails") or text.startswith("reference failed"):
        return f"reference code fails: {_exception(text)}"
    if "not evaluable" in text:
        return "reference not evaluable by the validator"
    if "no reference code" in text:
        return "no reference code"
    if text.startswith("task skipped"):
        rest = text.removeprefix("task skipped:").strip()
        return "task skipped: " + re.split(r" \(| /|:", rest)[0][:60]
    if "needs a kernel" in text:
        return "judge needs a kernel"
    if "'vis'" in text:
        return "vis validator (not implemented by DSEval)"
    return f"not judged: {text[:60]}" if text else "not judged"


def lost_reason(result: TurnResult) -> str | None:
    """Why a recorded turn was not scored; None for a scored or undecided turn."""
    if result.skipped:
        return result.skipped_reason or "skipped"
    if result.correct is None and not result.undecided:
        return result.judge_reason or "not judged"
    return None


class Losses(BaseModel):
    """The lost-work figures of a run, printed first and kept in ``metrics.json``."""

    model_config = ConfigDict(frozen=True)

    tasks_total: int
    tasks_failed: int
    tasks_rejected: int
    turns_total: int
    turns_scored: int
    turns_undecided: int
    turns_lost: int
    skipped_by_reason: dict[str, int]

    @property
    def lost_share(self) -> float:
        """Turns not scored (undecided ones aside) over recorded turns."""
        return self.turns_lost / self.turns_total if self.turns_total else 0.0

    @property
    def anything_lost(self) -> bool:
        """True when a task failed or was rejected, or a turn was not scored."""
        return bool(self.tasks_failed or self.tasks_rejected or self.turns_lost)

    @property
    def over_limit(self) -> bool:
        """True when more than `LOST_SHARE_LIMIT` of the turns were not scored."""
        return self.lost_share > LOST_SHARE_LIMIT


def losses(
    results: Iterable[TurnResult], *, tasks_failed: int = 0, tasks_rejected: int = 0
) -> Losses:
    """The lost-work figures of recorded turns (see the module docstring)."""
    results = list(results)
    reasons = [lost_reason(r) for r in results]
    counted = Counter(loss_category(r) for r in reasons if r is not None)
    return Losses(
        tasks_total=len({r.task_id for r in results}),
        tasks_failed=tasks_failed,
        tasks_rejected=tasks_rejected,
        turns_total=len(results),
        turns_scored=sum(1 for r in results if not r.skipped and r.correct is not None),
        turns_undecided=sum(1 for r in results if r.undecided and not r.skipped),
        turns_lost=sum(1 for r in reasons if r is not None),
        skipped_by_reason=dict(counted.most_common()),
    )


def summary_lines(figures: Losses | dict[str, Any]) -> list[str]:
    """The plain-text lines a console prints first (no markup)."""
    f = figures if isinstance(figures, Losses) else Losses.model_validate(figures)
    lines = [
        f"tasks failed: {f.tasks_failed}, tasks rejected: {f.tasks_rejected}, "
        f"turns scored: {f.turns_scored} / {f.turns_total}"
        + (f" ({f.turns_lost} not scored, {f.lost_share:.0%})" if f.turns_lost else "")
    ]
    for category, count in f.skipped_by_reason.items():
        lines.append(f"  not scored: {count} × {category}")
    return lines
