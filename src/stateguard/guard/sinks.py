"""Event sinks: where a guarded session sends manager events as they happen.

A sink is any callable taking a `ManagerEvent`. `JsonlEventSink` appends each
event as one JSON line (the run directory's ``manager_events.jsonl``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from stateguard.manager import ManagerEvent

EventSink = Callable[[ManagerEvent], None]


class JsonlEventSink:
    """Appends ``{"ts": ..., **event}`` per event to a file, flushed per event."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def __call__(self, event: ManagerEvent) -> None:
        """Append one event."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"ts": time.time(), **event.model_dump(mode="json")}) + "\n")


class EventList:
    """Keeps every event in memory (tests, interactive use)."""

    def __init__(self) -> None:
        self.events: list[ManagerEvent] = []

    def __call__(self, event: ManagerEvent) -> None:
        """Keep one event."""
        self.events.append(event)
