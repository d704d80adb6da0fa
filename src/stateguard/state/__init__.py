"""Analytical-state graph: immutable pydantic models and their SQLite store.

Pure data and storage; only ``stateguard.state.store`` touches SQLite.
"""

from stateguard.state.models import (
    AnalyticalState,
    Constraint,
    Relation,
    RelationType,
    StateIndexEntry,
    StateStatus,
    VariableRef,
)
from stateguard.state.store import SCHEMA_VERSION, StateStore

__all__ = [
    "SCHEMA_VERSION",
    "AnalyticalState",
    "Constraint",
    "Relation",
    "RelationType",
    "StateIndexEntry",
    "StateStatus",
    "StateStore",
    "VariableRef",
]
