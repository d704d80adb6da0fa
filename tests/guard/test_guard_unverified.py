"""A state committed over a step whose lineage is unverified says so (state and report)."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession
from stateguard.kernel import KernelSession
from stateguard.report.page import _state_card  # the card a state gets in report.html

pytestmark = pytest.mark.kernel

DISABLE = "__import__('stateguard.lineage.runtime', fromlist=['agent']).agent().enabled = False"


def test_commit_over_an_unverified_step_is_marked() -> None:
    with GuardedSession(KernelSession(), manager="deterministic") as guard:
        guard.begin_turn("What is x?")
        tampered = guard.run_cell(DISABLE + "\nx = 3")
        assert tampered.cell is not None and tampered.cell.unverified
        review = guard.propose_answer("3")
        assert review.accepted
        guard.end_turn()
        assert guard.store is not None
        states = guard.store.committed()
    assert states and states[-1].unverified_steps == (tampered.step,)
    card = _state_card(states[-1], _EmptyRun(), [])
    assert "committed on unverified lineage" in card


class _EmptyRun:
    def __init__(self) -> None:
        self.invalidators: dict[str, tuple[str, ...]] = {}
        self.stale_marks: dict[str, tuple] = {}
