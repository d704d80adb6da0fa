"""What the manager may see of and do to the worker's environment.

`Workspace` is the harness's only handle on the kernel and lineage, so the
harness and policies can be tested against a fake. `KernelWorkspace` is the
real one over a `TrackedSession`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from stateguard.kernel import ProbeResult, namespace
from stateguard.lineage import LineageGraph, TrackedSession, checkpoints


class Workspace(Protocol):
    """Read lineage; probe, prune and checkpoint the worker's namespace."""

    @property
    def graph(self) -> LineageGraph:
        """The session's lineage graph (read-only use)."""
        ...

    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run code on a copy-on-write snapshot; never changes the namespace."""
        ...

    def delete_variables(self, names: list[str]) -> list[str]:
        """Remove names from the worker's namespace; returns those that existed."""
        ...

    def checkpoint(self, checkpoint_id: str, names: list[str]) -> list[str]:
        """Save the current values of `names`; returns the names saved."""
        ...

    def restore(self, checkpoint_id: str, names: list[str]) -> list[str]:
        """Restore the checkpointed values of `names` (others stay); returns those restored."""
        ...


CHECKPOINT_DIR = ".stateguard/checkpoints"
"""Where checkpoints live, relative to the kernel's working directory."""


class KernelWorkspace:
    """The real workspace: a tracked kernel session plus a checkpoint folder."""

    def __init__(self, session: TrackedSession, checkpoint_dir: Path | None = None) -> None:
        """``checkpoint_dir`` must be reachable from inside the kernel; by default it is
        ``.stateguard/checkpoints`` in the kernel's working directory (a sandboxed kernel
        sees nothing else of the host)."""
        self.session = session
        self.checkpoint_dir = (
            Path(checkpoint_dir)
            if checkpoint_dir is not None
            else Path(session.kernel.workdir) / CHECKPOINT_DIR
        )
        self._saved: set[str] = set()
        """Checkpoints the kernel wrote in this session."""

    @property
    def graph(self) -> LineageGraph:
        """The session's lineage graph."""
        return self.session.graph

    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run code on a copy-on-write snapshot of the worker's namespace."""
        return self.session.kernel.run_probe(code, timeout=timeout)

    def delete_variables(self, names: list[str]) -> list[str]:
        """Delete names (silently: no lineage cell), then tell lineage they are gone."""
        res = self.session.kernel.execute(
            namespace.call("delete", list(names)), silent=True, store_history=False
        )
        removed = json.loads(res.stdout.strip() or "[]") if res.ok else []
        self.session.graph.record_deleted(removed)
        return removed

    def checkpoint(self, checkpoint_id: str, names: list[str]) -> list[str]:
        """Pickle the values of `names` (unpicklable ones are skipped)."""
        saved = checkpoints.save(self.session, self.checkpoint_dir / f"{checkpoint_id}.pkl", names)
        if saved is None:
            return []
        self._saved.add(checkpoint_id)
        return saved

    def restore(self, checkpoint_id: str, names: list[str]) -> list[str]:
        """Restore through a *tracked* cell so lineage records the new bindings."""
        if checkpoint_id not in self._saved or not names:
            return []
        return checkpoints.restore(
            self.session, self.checkpoint_dir / f"{checkpoint_id}.pkl", names
        )
