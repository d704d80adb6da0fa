"""The public API for guarding an agent: `GuardedSession` and what it returns.

`GuardedSession` is the composition root: it assembles an executor (any
`Executor`; ipykernel by default), lineage tracking, the state store and a manager,
and is the only place in stateguard that does.
"""

from stateguard.guard.outcomes import CellOutcome, Lineage, Rebuild, Review, StaleValue
from stateguard.guard.session import GuardedSession, GuardError, StoreKind
from stateguard.guard.sinks import EventList, EventSink, JsonlEventSink
from stateguard.kernel import Executor

__all__ = [
    "CellOutcome",
    "EventList",
    "EventSink",
    "Executor",
    "GuardError",
    "GuardedSession",
    "JsonlEventSink",
    "Lineage",
    "Rebuild",
    "Review",
    "StaleValue",
    "StoreKind",
]
