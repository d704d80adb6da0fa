"""A realistic run directory built with the real event models and state store.

Scenario (unit economics): revenue is computed, a cost rate of 0.10 is used
for costs and margins, an alternative branch excludes refunds, then the rate is
revised to 0.12 (S5 invalidates S2, so S2 and S3 go stale) and a summary
combines the revised rate with the branch. Hostile text (``EVIL``) is planted
in every user- or model-controlled field.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from stateguard.kernel.results import DisplayData, ErrorInfo, ExecutionResult
from stateguard.lineage import CellRecord, ReadRecord, StaleReason
from stateguard.manager import Hint, ManagerEvent
from stateguard.state import AnalyticalState, Constraint, Relation, StateStore, VariableRef
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ManagerLogged,
    ModelMessage,
    StepRecord,
    TurnStarted,
    dump_event,
)

EVIL = '<script>alert("pwned")</script>'
"""Planted in questions, code, observations, hints, answers and state fields."""


def tiny_png() -> str:
    """Base64 of a valid 8x4 PNG (blue pixels)."""
    width, height = 8, 4
    raw = b"".join(b"\x00" + b"\x25\x63\xeb" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode()


def _state(
    sid: str,
    issue: str,
    turn: int,
    rels: list[tuple[str, str | None]],
    variables: list[tuple[str, int, str]],
    conclusions: tuple[str, ...] = (),
    constraints: tuple[Constraint, ...] = (),
) -> AnalyticalState:
    return AnalyticalState(
        id=sid,
        issue=issue,
        turn=turn,
        relations=tuple(Relation(type=t, related_state_id=r) for t, r in rels),  # type: ignore[arg-type]
        used_variables=tuple(
            VariableRef(name=n, version=v, value_summary=s) for n, v, s in variables
        ),
        conclusions=conclusions,
        constraints=constraints,
        source_step_start=turn * 2,
        source_step_end=turn * 2 + 1,
    )


STATES: list[AnalyticalState] = [
    _state(
        "S1",
        "Load orders and compute revenue",
        0,
        [("init", None)],
        [("orders", 1, "DataFrame 1,200×6"), ("revenue", 1, "48210.5")],
        conclusions=("Total revenue is 48,210.50",),
    ),
    _state(
        "S2",
        "Cost per order at the 0.10 cost rate",
        1,
        [("progress", "S1")],
        [("cost_rate", 1, "0.1"), ("cost", 1, "Series len 1200")],
    ),
    _state(
        "S3",
        f"Margin by region {EVIL}",
        2,
        [("progress", "S2")],
        [("margin", 1, f"Series {EVIL}")],
        conclusions=("North has the best margin",),
    ),
    _state(
        "S4",
        "Alternative: exclude refunded orders",
        3,
        [("branch", "S1")],
        [("orders", 1, "DataFrame 1,200×6")],
        constraints=(Constraint(text="exclude refunded orders", code="orders.refunded.any()"),),
    ),
    _state(
        "S5",
        "Cost rate revised to 0.12",
        4,
        [("invalidate", "S2"), ("progress", "S1")],
        [("cost_rate", 2, "0.12"), ("cost", 2, "Series len 1200")],
    ),
    _state(
        "S6",
        "Summary with the revised rate",
        5,
        [("combine", "S5"), ("combine", "S4")],
        [("margin", 2, "Series len 4")],
        conclusions=("Overall margin is 37.9%",),
    ),
]
"""Committed in this order; S2 (directly) and S3 (through S2, and margin@v1) are stale."""

EXPECTED_STALE = {"S2", "S3"}
TOTAL_TOKENS = 5 * 1200 + 1000
"""answers.json gives 1200 per turn except turn 3, whose 900 + 100 come from the trajectory."""
TOTAL_WALL = 5 * 3.5 + 2.0
"""answers.json gives 3.5 s per turn except turn 3 (2.0 s from its AnswerRecorded)."""
EDGE_COUNT = 8
"""Relations drawn: one per relation of the committed states (init included)."""


def _execution(stdout: str, **kw: Any) -> ExecutionResult:
    return ExecutionResult(status=kw.pop("status", "ok"), stdout=stdout, wall_time=0.42, **kw)


def trajectory_events() -> list[Any]:
    """Six turns of events, in the order a worker would write them."""
    questions = [
        "What is the total revenue?",
        "What is the total cost at a 0.10 cost rate?",
        f"Which region has the best margin? {EVIL}",
        "Without refunded orders, how many orders remain?",
        "The cost rate is actually 0.12. What is the total cost now?",
        "Summarize the overall margin.",
    ]
    events: list[Any] = []
    step = 0
    for turn, question in enumerate(questions):
        events.append(TurnStarted(turn=turn, question=question, context="orders.csv in /data"))
        events.append(
            ModelMessage(turn=turn, step=step, role="user", content=question, prompt_tokens=0)
        )
        if turn == 4:
            hint = Hint(
                kind="state",
                text=f"Reference: S2 used cost_rate@v1 {EVIL}",
                state_ids=("S2",),
                variables=("cost_rate@v1",),
            )
            events.append(HintDelivered(turn=turn, step=step, hint=hint))
        code = f"print(orders.shape)  # {EVIL}" if turn == 2 else "total = orders.revenue.sum()"
        cell = None
        if turn == 5:
            reason = StaleReason(
                version="cost@v1",
                outdated="cost_rate@v1",
                used_by="cost@v1",
                superseded_by="cost_rate@v2",
                superseding_cell=8,
                current="cost_rate@v2",
                chain=("cost_rate@v1", "cost@v1"),
            )
            cell = CellRecord(
                cell=step,
                source=code,
                reads=(ReadRecord(name="cost", version="cost@v1", statement=0, stale=reason),),
            )
        displays = [DisplayData(data={"image/png": tiny_png(), "text/html": EVIL})]
        events.append(
            StepRecord(
                turn=turn,
                step=step,
                thought=f"Compute it. {EVIL}",
                code=code,
                observation="\n".join(f"line {i} <b>x</b>" for i in range(30)),
                execution=_execution("48210.5", displays=displays if turn == 0 else []),
                cell=cell,
            )
        )
        events.append(
            ModelMessage(
                turn=turn,
                step=step,
                role="assistant",
                content="ok",
                prompt_tokens=900,
                completion_tokens=100,
            )
        )
        step += 1
        if turn == 5:
            repair = Hint(
                kind="repair",
                text="cost@v1 is stale; recompute from cost_rate@v2",
                evidence=("cell 8 wrote cost_rate@v2",),
            )
            events.append(
                ManagerLogged(
                    turn=turn,
                    event=ManagerEvent(
                        type="repair",
                        turn=turn,
                        step=step,
                        data={"why": EVIL, "stale": ["cost@v1"]},
                    ),
                )
            )
            events.append(HintDelivered(turn=turn, step=step, hint=repair))
            events.append(
                StepRecord(
                    turn=turn,
                    step=step,
                    thought="Fix.",
                    code="1/0",
                    execution=_execution(
                        "",
                        status="error",
                        error=ErrorInfo(ename="ZeroDivisionError", evalue="division by zero"),
                    ),
                )
            )
            step += 1
        events.append(ManagerLogged(turn=turn, event=ManagerEvent(type="activation", turn=turn)))
        events.append(
            AnswerRecorded(
                turn=turn,
                answer=f"answer {turn} {EVIL}",
                steps=1,
                wall_time=2.0,
                manager_llm_calls=1,
                gold=None,
            )
        )
    return events


def answers() -> list[dict[str, Any]]:
    """answers.json entries: graded turns 0-2 (one wrong), the rest ungraded, some keys missing."""
    out: list[dict[str, Any]] = []
    for turn in range(6):
        entry: dict[str, Any] = {
            "turn": turn,
            "answer": f"answer {turn} {EVIL}",
            "steps": 1,
            "hints": 1 if turn == 4 else 0,
            "repairs": 1 if turn == 5 else 0,
            "wall_time": 3.5,
            "tokens": 1200,
        }
        if turn < 3:
            entry["gold"] = EVIL if turn == 2 else 48210.5
            entry["correct"] = turn != 1
        if turn == 3:
            del entry["tokens"], entry["wall_time"]
        out.append(entry)
    return out


def build_run(
    root: Path, *, states: bool = True, notebook: bool = True, answers_file: bool = True
) -> Path:
    """Write a complete run directory under ``root`` and return it."""
    run = root / "run-unit-economics"
    run.mkdir(parents=True)
    with open(run / "trajectory.jsonl", "w", encoding="utf-8") as fh:
        for event in trajectory_events():
            fh.write(dump_event(event) + "\n")
    if answers_file:
        (run / "answers.json").write_text(json.dumps(answers(), indent=1), encoding="utf-8")
    if states:
        with StateStore(run / "states.sqlite") as store:
            for state in STATES:
                store.commit(state)
            store.save_draft(AnalyticalState(id="S7", issue="unfinished draft"))
    if notebook:
        nb = {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": "code",
                    "source": "1",
                    "metadata": {},
                    "outputs": [],
                    "execution_count": 1,
                }
            ],
        }
        (run / "analysis.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return run


class Elements(HTMLParser):
    """Collects (tag, attributes) of every start tag, and the text outside tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def with_class(self, name: str) -> list[dict[str, str]]:
        """Attributes of every element whose class list contains ``name``."""
        return [a for _, a in self.elements if name in a.get("class", "").split()]

    def tags(self, tag: str) -> list[dict[str, str]]:
        """Attributes of every ``tag`` element."""
        return [a for t, a in self.elements if t == tag]


def parse(html: str) -> Elements:
    """Parse ``html`` into an `Elements`."""
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser
