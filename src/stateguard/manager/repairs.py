"""The repair schedule: per state light, heavy, then rollback (values only, no effects)."""

from __future__ import annotations

from collections.abc import Sequence

from stateguard.checks import Step
from stateguard.manager.notes import RepairMode
from stateguard.types import VarKey

_SCHEDULE: tuple[RepairMode, ...] = ("light", "heavy", "rollback")


def repair_mode(attempt: int, max_repairs: int) -> RepairMode:
    """The mode of repair ``attempt`` (1-based); the last allowed attempt rolls back."""
    if attempt >= max_repairs:
        return "rollback"
    return _SCHEDULE[min(attempt, len(_SCHEDULE)) - 1]


def suspect_names(suspected: Sequence[str]) -> list[str]:
    """Variable names of suspected versions (``name@vN`` -> ``name``)."""
    return [VarKey.name_of(v) for v in suspected]


def rollback_names(steps: Sequence[Step]) -> list[str]:
    """Names the draft's steps wrote: what a rollback restores."""
    return sorted({VarKey.name_of(k) for s in steps if s.cell is not None for k in s.cell.created})
