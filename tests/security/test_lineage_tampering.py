"""Lineage-hook tampering: a cell may switch stale detection off from inside the kernel.

These probes document a known gap of issue 10 (lineage tamper evidence needs a
per-session secret and a checked report channel in `stateguard.lineage`): today a
cell after the tampering yields no lineage record, and nothing marks it unverified.
They are strict xfails, so they start failing (and must be turned into plain
assertions) once the lineage session detects the tampering.
"""

from __future__ import annotations

import pytest

from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession

pytestmark = pytest.mark.kernel

TAMPERINGS = {
    "clear the IPython hooks": (
        "ip = get_ipython()\n"
        "for name in ('pre_run_cell', 'post_run_cell'):\n"
        "    ip.events.callbacks[name].clear()"
    ),
    "disable the lineage agent": (
        "__import__('stateguard.lineage.runtime', fromlist=['agent']).agent().enabled = False"
    ),
}


@pytest.mark.xfail(strict=True, reason="lineage has no tamper evidence yet (issue 10)")
@pytest.mark.parametrize("tamper", list(TAMPERINGS.values()), ids=list(TAMPERINGS))
def test_a_stale_read_after_tampering_is_still_reported(tamper: str) -> None:
    with TrackedSession(KernelSession()) as s:
        s.execute("rate = 0.10")
        s.execute("cost = 200 * rate")
        s.execute("rate = 0.12")
        s.execute(tamper)
        res = s.execute("y = cost")
    assert res.cell is not None, "the cell after the tampering has no lineage record"
    assert res.cell.stale_reads
