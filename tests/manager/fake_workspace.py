"""A kernel-free workspace for harness tests."""

from __future__ import annotations

from stateguard.kernel import ProbeResult
from stateguard.lineage import LineageGraph


class FakeWorkspace:
    """Records what the harness asked for; probes return a fixed value."""

    def __init__(self, probe_value: object = True) -> None:
        self.graph = LineageGraph()
        self.probe_value = probe_value
        self.deleted: list[list[str]] = []
        self.checkpoints: list[str] = []
        self.restored: list[str] = []

    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        return ProbeResult(
            status="ok",
            stdout="",
            result=repr(self.probe_value),
            value=self.probe_value,
            error=None,
            wall_time=0.0,
        )

    def delete_variables(self, names: list[str]) -> list[str]:
        self.deleted.append(list(names))
        return list(names)

    def checkpoint(self, checkpoint_id: str, names: list[str]) -> list[str]:
        self.checkpoints.append(checkpoint_id)
        return list(names)

    def restore(self, checkpoint_id: str, names: list[str]) -> list[str]:
        self.restored.append(checkpoint_id)
        return list(names)
