"""Recorded-step builders for verifier tests (no kernel)."""

from __future__ import annotations

import json
from typing import Any

from stateguard.checks import Step
from stateguard.kernel import ErrorInfo, ExecutionResult, ProbeResult
from stateguard.lineage import CellRecord, ReadRecord, StaleReason


def ok(
    code: str, stdout: str = "", result: str | None = None, thought: str = "", **kw: Any
) -> Step:
    ex = ExecutionResult(
        status="ok", stdout=stdout, result=result, wall_time=0.01, private=kw.pop("private", [])
    )
    return Step(thought=thought, code=code, observation=stdout + (result or ""), execution=ex, **kw)


def failed(code: str, ename: str, evalue: str = "", status: str = "error") -> Step:
    ex = ExecutionResult(status=status, error=ErrorInfo(ename=ename, evalue=evalue), wall_time=0.01)
    return Step(code=code, observation=f"{ename}: {evalue}", execution=ex)


def stale_cell(
    source: str,
    name: str,
    upstream: str,
    *,
    cell: int,
    superseding_cell: int,
    refresh: bool = False,
) -> CellRecord:
    """A cell that reads ``name@v1``, derived from ``upstream@v1``, which cell
    ``superseding_cell`` rewrote as ``upstream@v2``."""
    why = StaleReason(
        version=f"{name}@v1",
        outdated=f"{upstream}@v1",
        used_by=f"{name}@v1",
        superseded_by=f"{upstream}@v2",
        superseding_cell=superseding_cell,
        current=f"{upstream}@v2",
        chain=(f"{upstream}@v1", f"{name}@v1"),
    )
    read = ReadRecord(name=name, version=f"{name}@v1", statement=0, stale=why, refresh=refresh)
    return CellRecord(cell=cell, source=source, reads=(read,))


def answer(text: str, final: bool = True) -> Step:
    return Step(answer=text, final=final)


class FakeEnv:
    """An environment whose probes answer from a function of the code (records the calls)."""

    def __init__(self, fn: Any = None) -> None:
        self.fn = fn or (lambda code: ProbeResult(status="ok", wall_time=0.0))
        self.codes: list[str] = []

    def probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        self.codes.append(code)
        return self.fn(code)


def kinds_env(kinds: list[list[str]]) -> FakeEnv:
    """An environment whose probes print ``kinds`` (what `namespace.column_kinds` prints)."""
    return FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, stdout=json.dumps(kinds)))
