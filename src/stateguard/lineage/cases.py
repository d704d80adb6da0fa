"""Scoring staleness cases in the neutral case format.

A case file is a JSON list of ``{"id", "label", "cells": [source, ...],
"checks": [{"after": i, "expect_stale": bool}]}``. Each case runs in a fresh
namespace (``import logging`` already executed, untracked); a check passes when
"cell `after` read a stale version" equals `expect_stale`.

Kernels are reused across cases with a full namespace reset, and cases are
spread over a few kernels in parallel.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stateguard.errors import CaseFormatError
from stateguard.kernel import KernelSession
from stateguard.lineage.session import TrackedSession

CASE_SETUP = "import logging"


class Check(BaseModel):
    """One expectation: after cell `after`, did it read a stale version?"""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after: int = Field(ge=0)
    expect_stale: bool


class LineageCase(BaseModel):
    """A sequence of cells and the staleness checks on them."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    label: str = "ok"
    cells: tuple[str, ...]
    checks: tuple[Check, ...]

    @model_validator(mode="after")
    def _checks_in_range(self) -> LineageCase:
        for c in self.checks:
            if c.after >= len(self.cells):
                raise ValueError(
                    f"check after={c.after} but the case has only {len(self.cells)} cells"
                )
        return self


class CheckOutcome(BaseModel):
    """The result of one check."""

    model_config = ConfigDict(frozen=True)

    after: int
    expected: bool
    observed: bool | None
    """None when the cell's lineage is unknown (the kernel died, or no valid report)."""
    stale_reads: tuple[str, ...] = ()
    """Human-readable reasons for each stale read of that cell."""

    @property
    def passed(self) -> bool:
        """Whether observed matches expected."""
        return self.observed is self.expected


class CaseResult(BaseModel):
    """All check outcomes of one case, plus any cell errors met on the way."""

    model_config = ConfigDict(frozen=True)

    id: str
    checks: tuple[CheckOutcome, ...]
    cell_errors: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether every check of the case passed."""
        return all(c.passed for c in self.checks)


class CheckSummary(BaseModel):
    """Machine-readable result of scoring a case file."""

    cases: list[CaseResult]
    checks_passed: int
    checks_total: int


def load_cases(path: Path) -> list[LineageCase]:
    """Read and validate a case file; CaseFormatError names the case and field."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CaseFormatError(f"{path}: no such file") from exc
    except json.JSONDecodeError as exc:
        raise CaseFormatError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(raw, list):
        raise CaseFormatError(f"{path}: expected a JSON list of cases, got {type(raw).__name__}")
    cases: list[LineageCase] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        ident = item.get("id", f"#{i}") if isinstance(item, dict) else f"#{i}"
        try:
            case = LineageCase.model_validate(item)
        except ValidationError as exc:
            errs = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(case)'}: {e['msg']}" for e in exc.errors()
            )
            raise CaseFormatError(f"{path}: case {ident!r} (index {i}): {errs}") from exc
        if case.id in seen:
            raise CaseFormatError(f"{path}: case id {case.id!r} (index {i}) is duplicated")
        seen.add(case.id)
        cases.append(case)
    return cases


def run_case(session: TrackedSession, case: LineageCase, cell_timeout: float = 60.0) -> CaseResult:
    """Run one case in `session` after a namespace reset and score its checks."""
    session.reset()
    records = []
    errors: list[str] = []
    for i, cell in enumerate(case.cells):
        res = session.execute(cell, timeout=cell_timeout)
        if res.execution.status == "dead":
            errors.append(f"cell {i}: kernel died; restarted")
            session.restart()
        elif not res.execution.ok and res.execution.error is not None:
            errors.append(f"cell {i}: {res.execution.error.ename}: {res.execution.error.evalue}")
        records.append(res.cell)
    outcomes = []
    for chk in case.checks:
        rec = records[chk.after]
        outcomes.append(
            CheckOutcome(
                after=chk.after,
                expected=chk.expect_stale,
                observed=None if rec is None or rec.unverified else rec.read_stale,
                stale_reads=()
                if rec is None
                else tuple(r.stale.describe() for r in rec.stale_reads if r.stale is not None),
            )
        )
    return CaseResult(id=case.id, checks=tuple(outcomes), cell_errors=tuple(errors))


def check_cases(
    cases: Sequence[LineageCase],
    *,
    jobs: int = 2,
    cell_timeout: float = 60.0,
    on_result: Callable[[CaseResult], None] | None = None,
) -> CheckSummary:
    """Score `cases` on `jobs` reused kernels; results keep the input order."""
    jobs = max(1, min(jobs, len(cases) or 1))
    pool: Queue[TrackedSession] = Queue()
    # the cases version every rebinding ("rebound"), whatever the new value holds
    sessions = [
        TrackedSession(KernelSession(), setup_code=CASE_SETUP, by_value=False) for _ in range(jobs)
    ]
    lock = threading.Lock()

    def work(case: LineageCase) -> CaseResult:
        session = pool.get()
        try:
            result = run_case(session, case, cell_timeout)
        finally:
            pool.put(session)
        if on_result is not None:
            with lock:
                on_result(result)
        return result

    try:
        with ThreadPoolExecutor(jobs) as ex:
            for s in ex.map(lambda s: (s.start(), s)[1], sessions):
                pool.put(s)
            results = list(ex.map(work, cases))
    finally:
        for s in sessions:
            s.stop()
    passed = sum(c.passed for r in results for c in r.checks)
    total = sum(len(r.checks) for r in results)
    return CheckSummary(cases=results, checks_passed=passed, checks_total=total)
