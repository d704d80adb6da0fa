"""Manager events on disk: one flat record tagged by ``type``; older ``type`` + ``data``
lines and unknown event types still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateguard.guard.sinks import EventLogError, JsonlEventSink, read_event_log
from stateguard.manager import ManagerEvent
from stateguard.manager import events as E
from stateguard.worker.events import ManagerLogged, read_trajectory

EVENTS = [
    E.Activation(event="review", chain=0, draft="S1"),
    E.RepairLogged(state="S1", attempt=2, mode="heavy", removed=["df"]),
    E.Abandon(state="S1", reason="repair budget spent"),
    E.Commit(state={"id": "S2"}, checkpoint=["df", "total"]),
]


def test_a_record_is_the_flat_tagged_payload() -> None:
    event = ManagerEvent.of(E.Abandon(state="S1", reason="why"), turn=1, step=4)
    assert event.model_dump(mode="json") == {
        "type": "abandon",
        "turn": 1,
        "step": 4,
        "state": "S1",
        "reason": "why",
    }
    assert (event.type, event.data) == ("abandon", {"state": "S1", "reason": "why"})


@pytest.mark.parametrize("payload", EVENTS, ids=lambda p: p.type)
def test_records_round_trip_typed(payload: E.Payload) -> None:
    event = ManagerEvent.of(payload, turn=3, step=9)
    back = ManagerEvent.model_validate_json(event.model_dump_json())
    assert back == event and type(back.payload) is type(payload)


def test_an_older_type_and_data_line_reads_as_the_typed_event() -> None:
    old = {"type": "repair", "turn": 2, "step": 5, "data": {"state": "S3", "attempt": 1,
           "mode": "light", "removed": [], "restored": [], "notice": None}}  # fmt: skip
    event = ManagerEvent.model_validate(old)
    assert isinstance(event.payload, E.RepairLogged)
    assert (event.turn, event.step) == (2, 5)
    assert (event.payload.state, event.payload.mode) == ("S3", "light")


def test_an_unknown_event_is_kept_whole() -> None:
    old = {"type": "retired_kind", "turn": 1, "data": {"why": "gone", "n": 2}}
    event = ManagerEvent.model_validate(old)
    assert isinstance(event.payload, E.Unrecognized)
    assert (event.type, event.data) == ("retired_kind", {"why": "gone", "n": 2})
    assert ManagerEvent.model_validate_json(event.model_dump_json()) == event
    # a known type with fields that do not fit it is not forced into the type
    odd = ManagerEvent.model_validate({"type": "commit", "data": {"state": "not a dict"}})
    assert isinstance(odd.payload, E.Unrecognized) and odd.data == {"state": "not a dict"}


def test_the_sink_writes_flat_lines_and_the_reader_reads_both_shapes(tmp_path: Path) -> None:
    path = tmp_path / "manager_events.jsonl"
    sink = JsonlEventSink(path)
    for i, payload in enumerate(EVENTS):
        sink(ManagerEvent.of(payload, turn=0, step=i))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert all("data" not in line and "ts" in line for line in lines)
    assert [line["type"] for line in lines] == [p.type for p in EVENTS]
    with open(path, "a", encoding="utf-8") as fh:  # a line an older version wrote
        fh.write(json.dumps({"ts": 1.0, "type": "turn_end", "turn": 0, "data": {"answer": "42"}}))
        fh.write("\n\n")
    events = list(read_event_log(path))
    assert [e.payload for e in events] == [*EVENTS, E.TurnEnd(answer="42")]
    assert [e.step for e in events] == [0, 1, 2, 3, None]


@pytest.mark.parametrize(
    "line", ["not json", "[1, 2]", '{"turn": 1}', '{"type": "abandon", "turn": "first"}']
)
def test_a_bad_line_names_file_and_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "manager_events.jsonl"
    path.write_text(json.dumps({"type": "turn_end", "answer": None}) + "\n" + line + "\n")
    with pytest.raises(EventLogError, match=r"manager_events\.jsonl:2: not a manager event"):
        list(read_event_log(path))


def test_an_older_trajectory_with_manager_events_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.jsonl"
    old = {"type": "manager_event", "turn": 1,
           "event": {"type": "abandon", "turn": 1, "step": 2,
                     "data": {"state": "S1", "reason": "turn ended"}}}  # fmt: skip
    path.write_text(json.dumps(old) + "\n")
    (record,) = read_trajectory(path)
    assert isinstance(record, ManagerLogged)
    assert record.event.payload == E.Abandon(state="S1", reason="turn ended")
    assert '"data"' not in record.model_dump_json()
