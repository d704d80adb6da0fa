"""What the manager may see of and do to the worker's environment.

`Workspace` is the harness's only handle on the kernel and lineage, so the
harness and policies can be tested against a fake. `KernelWorkspace` is the
real one over a `TrackedSession`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from stateguard.kernel import ProbeResult
from stateguard.lineage import LineageGraph, TrackedSession
from stateguard.types import VarKey


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


_DELETE = """
import json as _sg_json
_sg_ns = get_ipython().user_ns
print(_sg_json.dumps([n for n in {names!r} if _sg_ns.pop(n, _sg_ns) is not _sg_ns]))
del _sg_json, _sg_ns
"""

_CHECKPOINT = """
import pickle as _sg_pickle, json as _sg_json
_sg_saved = {{}}
for _sg_n in {names!r}:
    if _sg_n in get_ipython().user_ns:
        try:
            _sg_saved[_sg_n] = _sg_pickle.dumps(get_ipython().user_ns[_sg_n])
        except Exception:
            pass
with open({path!r}, "wb") as _sg_fh:
    _sg_pickle.dump(_sg_saved, _sg_fh)
print(_sg_json.dumps(sorted(_sg_saved)))
del _sg_pickle, _sg_json, _sg_saved, _sg_fh
"""

_RESTORE = """
import pickle as _sg_pickle
with open({path!r}, "rb") as _sg_fh:
    for _sg_n, _sg_b in _sg_pickle.load(_sg_fh).items():
        if _sg_n in {names!r}:
            globals()[_sg_n] = _sg_pickle.loads(_sg_b)
del _sg_pickle, _sg_fh, _sg_n, _sg_b
"""


class KernelWorkspace:
    """The real workspace: a tracked kernel session plus a checkpoint folder."""

    def __init__(self, session: TrackedSession, checkpoint_dir: Path) -> None:
        self.session = session
        self.checkpoint_dir = Path(checkpoint_dir)

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
            _DELETE.format(names=list(names)), silent=True, store_history=False
        )
        removed = json.loads(res.stdout.strip() or "[]") if res.ok else []
        self.session.graph.record_deleted(removed)
        return removed

    def checkpoint(self, checkpoint_id: str, names: list[str]) -> list[str]:
        """Pickle the values of `names` (unpicklable ones are skipped)."""
        self.checkpoint_dir.mkdir(parents=True, exist_ok=True)
        path = self.checkpoint_dir / f"{checkpoint_id}.pkl"
        res = self.session.kernel.execute(
            _CHECKPOINT.format(names=list(names), path=str(path)),
            silent=True,
            store_history=False,
        )
        return json.loads(res.stdout.strip() or "[]") if res.ok else []

    def restore(self, checkpoint_id: str, names: list[str]) -> list[str]:
        """Restore through a *tracked* cell so lineage records the new bindings."""
        path = self.checkpoint_dir / f"{checkpoint_id}.pkl"
        if not path.exists() or not names:
            return []
        res = self.session.execute(_RESTORE.format(path=str(path), names=sorted(names)))
        if res.cell is None or not res.execution.ok:
            return []
        return sorted({VarKey.name_of(k) for k in res.cell.created})
