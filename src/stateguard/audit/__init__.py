"""Fail-loudly auditing of data analyses: a source map, typed operators, runtime checks,
and a join guard for plain pandas code.

Host-side names are imported lazily: the kernel process imports
`stateguard.audit.joinguard` and must not pay for the source map's dependencies.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AuditSettings": "stateguard.audit.auditor",
    "Auditor": "stateguard.audit.auditor",
    "CellAudit": "stateguard.audit.auditor",
    "audit_cell": "stateguard.audit.auditor",
    "AuditLedger": "stateguard.audit.ledger",
    "Coverage": "stateguard.audit.ledger",
    "AuditRuntime": "stateguard.audit.operators",
    "OperatorRejected": "stateguard.audit.operators",
    "OperatorCall": "stateguard.audit.observations",
    "SourceIndex": "stateguard.audit.discovery",
    "SourceMap": "stateguard.audit.sources",
    "index_lake": "stateguard.audit.sources",
    "discover_eval": "stateguard.audit.discover_eval",
    "operator_calls": "stateguard.audit.kernelops",
    "operators_prompt": "stateguard.audit.kernelops",
    "JOIN_MIME": "stateguard.audit.diagnostics",
    "FrameRef": "stateguard.audit.diagnostics",
    "JoinCellReport": "stateguard.audit.diagnostics",
    "JoinDiagnostic": "stateguard.audit.diagnostics",
    "JoinRecord": "stateguard.audit.diagnostics",
    "join_report": "stateguard.audit.diagnostics",
    "install_code": "stateguard.audit.joinguard",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stateguard.audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
