"""Event sinks: where a guarded session sends manager events as they happen.

A sink is any callable taking a `ManagerEvent`. `JsonlEventSink` appends each
event as one JSON line (the run directory's ``manager_events.jsonl``): the event's
flat, ``type``-tagged record plus ``ts``. `read_event_log` reads such a file back,
including lines an older version wrote (``type`` + ``data``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import ValidationError

from stateguard.errors import StateguardError
from stateguard.manager import ManagerEvent

EventSink = Callable[[ManagerEvent], None]


class EventLogError(StateguardError):
    """A line of a manager event log is not an event; the message names file and line."""


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


def read_event_log(path: Path) -> Iterator[ManagerEvent]:
    """The events of a ``manager_events.jsonl`` (either shape), oldest first.

    A line that is not a JSON object raises `EventLogError` naming the file and line;
    an object of an unknown event type is kept whole (`events.Unrecognized`).
    """
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                if not isinstance(raw, dict):
                    raise ValueError(f"a JSON {type(raw).__name__}, not an object")
                yield ManagerEvent.model_validate(raw)
            except (ValueError, ValidationError) as exc:
                raise EventLogError(f"{path}:{i}: not a manager event: {exc}") from exc
