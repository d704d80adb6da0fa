"""Event emission: the harness's typed events, stamped with turn and step, until drained."""

from __future__ import annotations

from stateguard.manager.events import Payload
from stateguard.manager.protocol import ManagerEvent


class EventLog:
    """Events logged since the last `drain`, oldest first."""

    def __init__(self) -> None:
        self._events: list[ManagerEvent] = []

    def log(self, payload: Payload, *, turn: int | None, step: int | None) -> None:
        """Add one event."""
        self._events.append(ManagerEvent.of(payload, turn=turn, step=step))

    def drain(self) -> list[ManagerEvent]:
        """The events since the last call."""
        out, self._events = self._events, []
        return out
