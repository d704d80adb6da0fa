"""Deterministic def/use analysis, runtime mutation detection and versioned staleness.

The unit of lineage is a symbol: a name, or a part of one reached by a constant
path (``df['cost']``, ``d['k']['j']``, ``lst[0]``, ``box.w``).

Layers (each imports only the ones above it): `facts` (what the static pass
produces), `_paths` + `_scopes` + `_visitor` + `static` (pure `ast`: access
paths, guarded blocks, def/use), `fingerprint` + `objects` + `parts` +
`coverage` + `runtime` (inside the kernel: per-part fingerprints, path
normalization against live values, markers of the blocks that ran), `report`
(what crosses from the kernel), `placement` + `graph` (versions and staleness;
values only), `session` (a kernel session with tracking), `checkpoints` (save named
values, restore them as a tracked cell), `cases` (scoring staleness case files).
"""

from stateguard.lineage.graph import (
    CellRecord,
    LineageGraph,
    ReadRecord,
    StaleReason,
    VariableVersion,
)
from stateguard.lineage.report import CellReport
from stateguard.lineage.session import TrackedResult, TrackedSession
from stateguard.lineage.static import CellAnalysis, FunctionInfo, StatementInfo, analyze_cell

__all__ = [
    "CellAnalysis",
    "CellRecord",
    "CellReport",
    "FunctionInfo",
    "LineageGraph",
    "ReadRecord",
    "StaleReason",
    "StatementInfo",
    "TrackedResult",
    "TrackedSession",
    "VariableVersion",
    "analyze_cell",
]
