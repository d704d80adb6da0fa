"""A recorded step is a `stateguard.checks.Step`, and its trajectory line kept its shape."""

from __future__ import annotations

import json
from pathlib import Path

from stateguard.checks import Step
from stateguard.kernel.results import ExecutionResult
from stateguard.lineage import CellRecord
from stateguard.worker.events import StepRecord, dump_event, read_trajectory

# Lines as the worker wrote them before `StepRecord` became a `Step` (same keys, same order).
CODE_LINE = (
    '{"turn":1,"ts":1700000000.5,"type":"step","step":3,"thought":"sum the cost",'
    '"code":"cost.sum()","observation":"5","execution":{"status":"ok","stdout":"5\\n",'
    '"stderr":"","result":"5","displays":[],"error":null,"wall_time":0.25,'
    '"execution_count":null,"private":[]},"cell":{"cell":4,"source":"cost.sum()",'
    '"reads":[{"name":"cost","version":"cost@v1","statement":0,"stale":{"version":"cost@v1",'
    '"outdated":"rate@v1","used_by":"cost@v1","superseded_by":"rate@v2","superseding_cell":3,'
    '"current":"rate@v2","chain":["rate@v1","cost@v1"]},"refresh":false,"carried":false}],'
    '"created":["total@v1"],"unchanged":[],"deleted":[],"failed_statement":null,'
    '"syntax_error":null,"unverified":null},"answer":null,"problem":null,"setup":false}'
)
ANSWER_LINE = (
    '{"turn":2,"ts":1700000001.0,"type":"step","step":7,"thought":"done","code":null,'
    '"observation":"","execution":null,"cell":null,"answer":"5","problem":null,"setup":false}'
)
SETUP_LINE = (
    '{"turn":0,"ts":1700000002.0,"type":"step","step":0,"thought":"load",'
    '"code":"import pandas","observation":"","execution":null,"cell":null,"answer":null,'
    '"problem":null,"setup":true}'
)
LINE_KEYS = [
    "turn",
    "ts",
    "type",
    "step",
    "thought",
    "code",
    "observation",
    "execution",
    "cell",
    "answer",
    "problem",
    "setup",
]


def _read(tmp_path: Path, *lines: str) -> list[StepRecord]:
    path = tmp_path / "trajectory.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    events = list(read_trajectory(path))
    assert all(isinstance(e, StepRecord) for e in events)
    return events  # type: ignore[return-value]


def test_an_old_step_line_loads_as_a_step_and_is_written_back_byte_for_byte(
    tmp_path: Path,
) -> None:
    code, answer, setup = _read(tmp_path, CODE_LINE, ANSWER_LINE, SETUP_LINE)
    assert isinstance(code, Step) and isinstance(answer, Step)
    assert (code.turn, code.step, code.ts) == (1, 3, 1700000000.5)
    assert code.execution is not None and code.execution.stdout == "5\n"
    assert code.cell is not None and code.cell.created == ("total@v1",)
    assert not code.is_answer and answer.is_answer and setup.setup
    assert not (code.final or code.result)
    assert [dump_event(e) for e in (code, answer, setup)] == [CODE_LINE, ANSWER_LINE, SETUP_LINE]


def test_a_new_step_line_has_the_keys_it_always_had_in_order() -> None:
    ok = ExecutionResult(status="ok", stdout="1\n", wall_time=0.1)
    record = StepRecord(turn=1, step=0, code="x", execution=ok, cell=CellRecord(cell=1, source="x"))
    assert list(json.loads(dump_event(record))) == LINE_KEYS
    assert list(record.model_dump()) == LINE_KEYS


def test_a_record_converts_to_a_step_and_back_without_loss(tmp_path: Path) -> None:
    (record,) = _read(tmp_path, CODE_LINE)
    step = record.as_step()
    assert type(step) is Step
    assert all(getattr(step, k) == getattr(record, k) for k in Step.model_fields)
    assert StepRecord(**dict(step), ts=record.ts) == record
    assert dump_event(StepRecord(**dict(step), ts=record.ts)) == CODE_LINE


def test_the_verifiers_marks_are_written_only_when_set(tmp_path: Path) -> None:
    marked = StepRecord(turn=1, step=2, answer="5", final=True)
    line = dump_event(marked)
    assert json.loads(line)["final"] is True and "result" not in json.loads(line)
    (back,) = _read(tmp_path, line)
    assert back == marked
