"""`KernelWorkspace` on a real kernel: delete, checkpoint, restore (tracked), probes."""

from __future__ import annotations

import pytest

from stateguard.kernel import namespace
from stateguard.lineage import TrackedSession
from stateguard.manager.workspace import KernelWorkspace

pytestmark = pytest.mark.kernel


def test_checkpoint_restore_and_delete(tracked: TrackedSession) -> None:
    ws = KernelWorkspace(tracked)  # inside the kernel's working directory: the sandbox sees it
    assert ws.checkpoint_dir.is_relative_to(tracked.kernel.workdir)
    tracked.execute("rate = 0.10\ncost = 200 * rate\nlock = __import__('threading').Lock()")
    assert ws.checkpoint("c1", ["rate", "cost", "lock", "missing"]) == ["cost", "rate"]

    tracked.execute("rate = 0.5\ncost = -1")
    assert ws.restore("c1", ["cost"]) == ["cost"]  # rate stays as it is
    values = tracked.execute("(rate, cost)")
    assert values.execution.result == "(0.5, 20.0)"
    assert tracked.graph.latest("cost").key == "cost@v3"  # lineage saw the restore

    assert ws.delete_variables(["cost", "nope"]) == ["cost"]
    assert tracked.execute("'cost' in globals()").execution.result == "False"
    assert ws.restore("never-saved", ["rate"]) == []


def test_describe_runs_in_a_probe(tracked: TrackedSession) -> None:
    tracked.execute("import pandas as pd\ns = pd.Series([1.0, 2.0])\nn = [1, 2, 3]")
    probe = tracked.kernel.run_probe(namespace.call("describe", ["s", "n", "gone"]))
    assert probe.ok and probe.stdout.strip() == (
        '{"s": "Series shape=(2,) dtype=float64", "n": "list len=3"}'
    )
    assert namespace.call("delete", ["a"]) == (
        "__import__('stateguard.kernel.namespace', fromlist=['delete']).delete(['a'])"
    )
