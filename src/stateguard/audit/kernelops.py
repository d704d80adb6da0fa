"""The typed operators as functions in the kernel: `Discover`, `Bash`, `Scan`, …

`install_operators(lake)` runs inside the kernel. It builds an `AuditRuntime`
over the lake and binds its operators into the user namespace under capitalized
names (so they do not collide with the agent's own variables), hidden from
lineage. Every call is published as private display data (`OPS_MIME`), which
the host turns back into `OperatorCall`s with `operator_calls`. A rejected call
raises `OperatorRejected` in the cell: the agent sees the diagnostic as the error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from stateguard.audit.observations import OperatorCall
from stateguard.audit.operators import AuditRuntime
from stateguard.audit.sources import SourceMap, index_lake

#: MIME type of one operator call published from the kernel.
OPS_MIME = "application/vnd.stateguard.audit.op+json"

NAMES = ("Discover", "Bash", "Scan", "UnionScan", "Probe", "Query", "Batch")
"""Names the operators get in the kernel's namespace."""

_RUNTIME: Any = None
_MAPS: dict[tuple[str, int], SourceMap] = {}
"""Source maps indexed in this process, by lake and tree fingerprint (a reset re-installs
the operators; it should not re-read the whole lake)."""


def _tree_fingerprint(root: Path) -> int:
    """Hash of every file's relative path, size and modification time under `root`."""
    entries = []
    for dirpath, _, files in os.walk(root):
        for name in files:
            full = os.path.join(dirpath, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            entries.append((os.path.relpath(full, root), st.st_size, st.st_mtime_ns))
    return hash(tuple(sorted(entries)))


def source_map_for(lake: str | Path) -> SourceMap:
    """The lake's source map, indexed once per process while the files stay the same."""
    root = Path(lake).resolve()
    key = (str(root), _tree_fingerprint(root))
    if key not in _MAPS:
        _MAPS[key] = index_lake(root)
    return _MAPS[key]


def install_operators(
    lake: str | Path, *, mode: Literal["reject", "flag"] = "reject", shell: Any | None = None
) -> Any:
    """Index `lake` and bind the operators into the kernel's namespace; returns the runtime."""
    global _RUNTIME
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()

    def publish(call: OperatorCall) -> None:
        from IPython.display import publish_display_data

        publish_display_data({OPS_MIME: call.model_dump(mode="json")})

    rt = AuditRuntime(lake, source_map=source_map_for(lake), on_call=publish, mode=mode)
    bound = {
        "Discover": rt.discover,
        "Bash": rt.bash,
        "Scan": rt.scan,
        "UnionScan": rt.union_scan,
        "Probe": rt.probe,
        "Query": rt.query,
        "Batch": rt.batch,
    }
    shell.user_ns.update(bound)
    shell.user_ns_hidden.update(bound)
    _RUNTIME = rt
    return rt


def install_code(lake: str | Path, mode: Literal["reject", "flag"] = "reject") -> str:
    """Python source a host runs (silently) in a kernel to install the operators."""
    return (
        "__import__('stateguard.audit.kernelops', fromlist=['install_operators'])"
        f".install_operators({str(lake)!r}, mode={mode!r})"
    )


def operators_prompt() -> str:
    """The operators' one-line documentation, for an agent's system prompt."""
    from importlib.resources import files

    return files("stateguard.audit").joinpath("prompts/operators.md").read_text(encoding="utf-8")


def operator_calls(private: Iterable[dict[str, Any]]) -> tuple[OperatorCall, ...]:
    """The operator calls among an execution's private payloads, in call order."""
    return tuple(
        OperatorCall.model_validate(p.get("data")) for p in private if p.get("mime") == OPS_MIME
    )
