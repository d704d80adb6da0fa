"""Segment-induced lifecycle on a real kernel: states form every K steps."""

from __future__ import annotations

import pytest

from stateguard.checks import Step
from stateguard.manager.harness import HarnessConfig, StateHarness
from stateguard.manager.policies.deterministic import DeterministicPolicy
from stateguard.manager.workspace import KernelWorkspace
from stateguard.state import StateStore

pytestmark = pytest.mark.kernel


def test_segments_commit_and_repair_stale_reuse(tracked, tmp_path) -> None:
    harness = StateHarness(
        DeterministicPolicy(),
        KernelWorkspace(tracked, tmp_path / "ckpt"),
        StateStore(tmp_path / "states.sqlite"),
        config=HarnessConfig(lifecycle="segment", cadence=2),
    )
    assert harness.begin_turn(0, "one long task") == []  # no state opened up front
    cells = [
        "rate = 0.1",
        "cost = 200 * rate",  # segment 1 (2 steps) -> a committed state
        "rate = 0.2",
        "note = 'revised'",  # segment 2 -> committed, invalidates segment 1
        "total = cost + 1",  # reads the stale cost
        "print(total)",  # segment 3 -> repair
    ]
    hints_by_step = []
    for i, code in enumerate(cells):
        res = tracked.execute(code)
        hints_by_step.append(
            harness.after_step(
                Step(turn=0, step=i, code=code, execution=res.execution, cell=res.cell)
            )
        )
    committed = harness.store.committed()
    assert [s.source_step_start for s in committed] == [0, 2]
    assert any(
        r.type == "invalidate" and r.related_state_id == committed[0].id
        for r in committed[1].relations
    )
    repairs = [(i, h) for i, hs in enumerate(hints_by_step) for h in hs if h.kind == "repair"]
    assert [i for i, _ in repairs] == [5]
    assert "cost@v1" in repairs[0][1].variables
    assert any("rate@v2" in e for e in repairs[0][1].evidence)
    harness.close()
