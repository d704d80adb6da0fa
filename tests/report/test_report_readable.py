"""What a long run's report says: repeats collapsed, readable manager events, why a turn
has no answer, one step numbering, and a stale card that agrees with the timeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from report_fixture import parse

from stateguard.kernel.results import ExecutionResult
from stateguard.lineage import CellRecord, ReadRecord, StaleReason
from stateguard.manager import ManagerEvent
from stateguard.manager.events import Abandon, Commit, TurnEnd
from stateguard.report import write_report
from stateguard.report.describe import event_text, no_answer_text
from stateguard.state import StateStore
from stateguard.worker.events import (
    AnswerRecorded,
    ManagerLogged,
    StepRecord,
    TurnStarted,
    dump_event,
)

UNGROUNDED = "Your answer was not submitted: 74 appear in no output of this session."


def _write(tmp_path: Path, events: list[Any], *, states: bool = False) -> str:
    run = tmp_path / "run"
    run.mkdir()
    with open(run / "trajectory.jsonl", "w", encoding="utf-8") as fh:
        for event in events:
            fh.write(dump_event(event) + "\n")
    (run / "answers.json").write_text(json.dumps({"turns": []}), encoding="utf-8")
    if states:
        StateStore(run / "states.sqlite").close()
    return write_report(run).read_text(encoding="utf-8")


def _ok(stdout: str = "1200") -> ExecutionResult:
    return ExecutionResult(status="ok", stdout=stdout, wall_time=0.1)


def _text(page: str) -> str:
    return " ".join(" ".join(parse(page).text).split())


def test_repeated_steps_are_drawn_once(tmp_path: Path) -> None:
    events: list[Any] = [TurnStarted(turn=1, question="How many?")]
    events.append(StepRecord(turn=1, step=0, code="len(df)", observation="1200", execution=_ok()))
    for step in (1, 2, 3):
        events.append(
            StepRecord(
                turn=1,
                step=step,
                answer="orders: 74",
                observation=UNGROUNDED,
                problem="ungrounded_answer",
            )
        )
    events.append(StepRecord(turn=1, step=4, answer="1200"))
    events.append(AnswerRecorded(turn=1, answer="1200", steps=5, wall_time=3.0))
    page = _write(tmp_path, events)
    dom = parse(page)
    assert len(dom.with_class("step")) == 3  # the cell, the first of the repeats, the answer
    assert [r["data-repeats"] for r in dom.with_class("repeats")] == ["2"]
    assert "the same reply and outcome 2 more times: steps 3, 4" in _text(page)
    assert page.count(UNGROUNDED) == 1


def test_steps_are_numbered_within_their_turn(tmp_path: Path) -> None:
    events: list[Any] = []
    for turn, first in ((1, 0), (2, 7)):
        events.append(TurnStarted(turn=turn, question=f"q{turn}"))
        for k in range(2):
            code = f"x{turn}{k} = {k}"
            events.append(StepRecord(turn=turn, step=first + k, code=code, execution=_ok("")))
        events.append(AnswerRecorded(turn=turn, answer="1", steps=2, wall_time=1.0))
    page = _write(tmp_path, events)
    numbers = [t for t in parse(page).text if t.startswith("step ")]
    assert numbers == ["step 1", "step 2", "step 1", "step 2"]


def test_manager_events_are_sentences_with_the_raw_event_aside(tmp_path: Path) -> None:
    commit = ManagerEvent.of(
        Commit(state={"id": "S3", "issue": "Total margin"}, checkpoint=["orders", "margin"]),
        turn=1,
        step=0,
    )
    events: list[Any] = [
        TurnStarted(turn=1, question="q"),
        StepRecord(turn=1, step=0, code="m = 1", execution=_ok("")),
        ManagerLogged(turn=1, event=commit),
        AnswerRecorded(turn=1, answer="1", steps=1, wall_time=1.0),
    ]
    page = _write(tmp_path, events)
    dom = parse(page)
    (item,) = dom.with_class("mgr")
    assert item["data-type"] == "commit"
    assert "committed state S3: “Total margin” (checkpoint of orders, margin) · after step 1" in (
        _text(page)
    )
    # the JSON of the event is only inside its disclosure
    raws = dom.with_class("raw")
    assert len(raws) == 1 and dom.tags("details")


def test_event_text_of_common_events() -> None:
    abandon = ManagerEvent.of(Abandon(state="S1", reason="turn ended without a committed state"))
    assert event_text(abandon) == ("abandoned draft state S1: turn ended without a committed state")
    assert event_text(ManagerEvent.of(TurnEnd(answer=None))) == "closed the turn without an answer"


def test_a_turn_without_an_answer_says_why(tmp_path: Path) -> None:
    events: list[Any] = []
    for turn, ended in ((1, "time"), (2, "no_progress"), (3, "interrupt")):
        events.append(TurnStarted(turn=turn, question=f"q{turn}"))
        events.append(AnswerRecorded(turn=turn, answer=None, steps=2, wall_time=1.0, ended=ended))
    events.append(TurnStarted(turn=4, question="q4"))  # the run stopped during turn 4
    page = _write(tmp_path, events)
    reasons = [a["data-ended"] for a in parse(page).with_class("no-answer")]
    assert reasons == ["time", "no_progress", "interrupt", "unfinished"]
    text = _text(page)
    for ended in ("time", "no_progress", "interrupt", None):
        assert f"no answer: {no_answer_text(ended, 2)}" in text
    assert no_answer_text("steps", 10) == "the step budget ran out (10 steps)"


def test_an_unconfirmed_answer_is_shown_as_such(tmp_path: Path) -> None:
    events: list[Any] = [
        TurnStarted(turn=1, question="What share?"),
        AnswerRecorded(
            turn=1, answer="76.5", unconfirmed=True, steps=4, wall_time=1.0, ended="no_progress"
        ),
    ]
    page = _write(tmp_path, events)
    dom = parse(page)
    assert not dom.with_class("no-answer")
    assert len(dom.with_class("unconfirmed-note")) == 1
    assert f"unconfirmed: no answer was accepted ({no_answer_text('no_progress', 4)})" in _text(
        page
    )


def test_the_stale_card_counts_the_stale_reads_the_timeline_marks(tmp_path: Path) -> None:
    reason = StaleReason(
        version="cost@v1",
        outdated="rate@v1",
        used_by="cost@v1",
        superseded_by="rate@v2",
        superseding_cell=3,
        current="rate@v2",
        chain=("rate@v1", "cost@v1"),
    )
    cell = CellRecord(
        cell=4,
        source="cost.sum()",
        reads=(ReadRecord(name="cost", version="cost@v1", statement=0, stale=reason),),
    )
    events: list[Any] = [
        TurnStarted(turn=1, question="q"),
        StepRecord(turn=1, step=0, code="cost.sum()", execution=_ok("5"), cell=cell),
        AnswerRecorded(turn=1, answer="5", steps=1, wall_time=1.0),
    ]
    page = _write(tmp_path, events, states=True)
    text = _text(page)
    assert len(parse(page).with_class("stale-read")) == 1
    assert "1 stale read in the timeline" in text and "none stale" not in text


def test_none_stale_only_when_nothing_is(tmp_path: Path) -> None:
    events: list[Any] = [
        TurnStarted(turn=1, question="q"),
        StepRecord(turn=1, step=0, code="1", execution=_ok("1")),
        AnswerRecorded(turn=1, answer="1", steps=1, wall_time=1.0),
    ]
    assert "none stale" in _text(_write(tmp_path, events, states=True))
