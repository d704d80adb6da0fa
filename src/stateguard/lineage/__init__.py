"""Deterministic def/use analysis, runtime mutation detection and versioned staleness.

Layers (each imports only the ones above it): `facts` (what the static pass
produces), `_scopes` + `_visitor` + `static` (pure `ast`), `fingerprint` +
`objects` + `runtime` (inside the kernel), `report` (what crosses from the
kernel), `placement` + `graph` (versions and staleness; values only),
`session` (a kernel session with tracking), `cases` (scoring staleness case files).
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
