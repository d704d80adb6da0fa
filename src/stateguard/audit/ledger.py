"""The audit ledger: every operator call of a run, in order, persisted as JSON lines.

It is the shared state the validation rules read (earlier probes, scans) and
what coverage is computed from: which sources, and which parts of them, the
agent has actually observed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stateguard.audit.observations import (
    ColumnProfile,
    OperatorCall,
    ProbeObservation,
    ScanObservation,
    UnionScanObservation,
)


class SourceCoverage(BaseModel):
    """What the agent saw of one source."""

    model_config = ConfigDict(frozen=True)

    source: str
    tables: tuple[str, ...] = ()
    """Registered tables loaded from it."""
    rows: int = 0
    rows_shown: int = 0
    """Rows displayed in scan previews."""
    columns: tuple[str, ...] = ()
    profiled: tuple[str, ...] = ()
    """Columns a probe described (frequencies, ranges, nulls)."""


class Coverage(BaseModel):
    """Coverage of every source the run touched."""

    model_config = ConfigDict(frozen=True)

    sources: dict[str, SourceCoverage] = {}

    def unobserved(self, source_ids: Iterable[str]) -> tuple[str, ...]:
        """Of `source_ids`, those never scanned in this run."""
        return tuple(s for s in source_ids if s not in self.sources)

    def unprofiled(self, source_id: str, columns: Iterable[str]) -> tuple[str, ...]:
        """Of `columns` of a source, those no probe ever described."""
        cov = self.sources.get(source_id)
        seen = set(cov.profiled) if cov else set()
        return tuple(c for c in columns if c not in seen)


class AuditLedger:
    """Operator calls in order; appended to `path` (JSON lines) when one is given."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.calls: list[OperatorCall] = []
        if path is not None and path.exists():
            self.calls = [
                OperatorCall.model_validate_json(line)
                for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]

    @property
    def next_seq(self) -> int:
        """Sequence number of the next call."""
        return self.calls[-1].seq + 1 if self.calls else 1

    def append(self, call: OperatorCall) -> None:
        """Keep a call (and write it through to the file)."""
        self.calls.append(call)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(call.model_dump_json() + "\n")

    def extend(self, calls: Iterable[OperatorCall]) -> None:
        """Keep several calls, e.g. those a kernel reported for one cell."""
        for c in calls:
            self.append(c)

    def profile(self, table: str, column: str) -> tuple[int, ColumnProfile] | None:
        """The latest probe of `table.column`: (call seq, profile)."""
        for call in reversed(self.calls):
            obs = call.observation
            if call.status == "ok" and isinstance(obs, ProbeObservation) and obs.table == table:
                for p in obs.profiles:
                    if p.name == column:
                        return call.seq, p
        return None

    def source_of(self, table: str) -> tuple[str, ...]:
        """Sources a registered table was loaded from (latest registration wins)."""
        for call in reversed(self.calls):
            obs = call.observation
            if call.status != "ok":
                continue
            if isinstance(obs, ScanObservation) and obs.table == table:
                return (obs.source,)
            if isinstance(obs, UnionScanObservation) and obs.table == table:
                return obs.sources
        return ()

    def coverage(self) -> Coverage:
        """Per source: tables, rows, preview rows shown, columns and profiled columns."""
        acc: dict[str, _Acc] = {}
        table_sources: dict[str, tuple[str, ...]] = {}
        for call in self.calls:
            obs = call.observation
            if call.status != "ok" or obs is None:
                continue
            if isinstance(obs, ScanObservation):
                table_sources[obs.table] = (obs.source,)
                a = acc.setdefault(obs.source, _Acc())
                a.tables.append(obs.table)
                a.rows = obs.rows
                a.rows_shown = max(a.rows_shown, obs.preview_rows)
                a.columns = tuple(c.name for c in obs.columns)
            elif isinstance(obs, UnionScanObservation):
                table_sources[obs.table] = obs.sources
                for src in obs.sources:
                    a = acc.setdefault(src, _Acc())
                    a.tables.append(obs.table)
                    a.rows = obs.rows_per_source.get(src, 0)
                    a.columns = tuple(
                        c for c in obs.columns if src not in obs.missing_columns.get(c, ())
                    )
            elif isinstance(obs, ProbeObservation):
                for src in table_sources.get(obs.table, ()):
                    acc.setdefault(src, _Acc()).profiled.update(p.name for p in obs.profiles)
        return Coverage(
            sources={
                src: SourceCoverage(
                    source=src,
                    tables=tuple(dict.fromkeys(a.tables)),
                    rows=a.rows,
                    rows_shown=a.rows_shown,
                    columns=a.columns,
                    profiled=tuple(sorted(a.profiled)),
                )
                for src, a in acc.items()
            }
        )


@dataclass
class _Acc:
    tables: list[str] = field(default_factory=list)
    rows: int = 0
    rows_shown: int = 0
    columns: tuple[str, ...] = ()
    profiled: set[str] = field(default_factory=set)
