"""Save named values of a tracked session's namespace to a file, and put them back.

Saving runs silently (no cell, no lineage: nothing changes). Restoring runs as a
*tracked* cell, so lineage records the new bindings as versions like any other write.
The file must be reachable from inside the kernel (a sandboxed kernel sees only its
working directory). Values that cannot be pickled are skipped, and said so by the names
returned.
"""

from __future__ import annotations

import json
from pathlib import Path

from stateguard.kernel import namespace
from stateguard.lineage.session import TrackedSession
from stateguard.types import VarKey


def save(session: TrackedSession, path: Path, names: list[str]) -> list[str] | None:
    """Pickle the values of ``names`` into ``path``; the names saved (sorted), or None
    when the kernel could not write the file."""
    res = session.kernel.execute(
        namespace.call("checkpoint", str(path), list(names)), silent=True, store_history=False
    )
    return json.loads(res.stdout.strip() or "[]") if res.ok else None


def restore(session: TrackedSession, path: Path, names: list[str]) -> list[str]:
    """Rebind each of ``names`` saved in ``path`` through a tracked cell; the names bound."""
    res = session.execute(namespace.call("restore", str(path), sorted(names)))
    if res.cell is None or not res.execution.ok:
        return []
    return sorted({VarKey.name_of(k) for k in res.cell.created})
