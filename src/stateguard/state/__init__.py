"""Analytical-state graph: immutable pydantic models and their SQLite store.

Pure data and storage; only ``stateguard.state.store`` touches SQLite.
"""

from stateguard.state.models import (
    AnalyticalState,
    Constraint,
    Relation,
    RelationType,
    StaleMark,
    StateIndexEntry,
    StateStatus,
    VariableRef,
    VariableRole,
)
from stateguard.state.store import SCHEMA_VERSION, StateStore

__all__ = [
    "SCHEMA_VERSION",
    "AnalyticalState",
    "Constraint",
    "Relation",
    "RelationType",
    "StaleMark",
    "StateIndexEntry",
    "StateStatus",
    "StateStore",
    "VariableRef",
    "VariableRole",
]
