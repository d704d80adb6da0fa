"""Typed operators over a data lake, each recorded in the audit ledger.

`AuditRuntime` offers `discover`, `bash`, `scan`, `union_scan`, `probe` and
`query` (and `batch` to submit several at once). Each call records its declared
inputs, arguments and resulting observation as an `OperatorCall`; validation
rules run before the call (an alarm refuses it with `OperatorRejected`, whose
message is the diagnostic) and after it.

Tables loaded by `scan`/`union_scan` or produced by `query(..., output=)` are
registered by name for later `probe` and `query` calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd

from stateguard.audit.bash import run_readonly
from stateguard.audit.discovery import SourceIndex
from stateguard.audit.errors import AuditError, OperatorRefused, SourceMapError
from stateguard.audit.ledger import AuditLedger
from stateguard.audit.observations import (
    ColumnProfile,
    DiscoverObservation,
    Observation,
    OperatorCall,
    OperatorKind,
    ProbeObservation,
    QueryObservation,
    ScanObservation,
    UnionScanObservation,
)
from stateguard.audit.readers import read_parts
from stateguard.audit.rules import Context, run_operator_rules
from stateguard.audit.sources import ColumnInfo, SourceMap, index_lake, table_signature
from stateguard.audit.sqlfacts import parse_sql

PREVIEW_ROWS = 5
VISIBLE_RECORDS = 20
TOP_VALUES = 20


class OperatorRejected(AuditError):
    """A validation rule refused an operator call; the message is its diagnostic."""

    def __init__(self, call: OperatorCall) -> None:
        self.call = call
        reasons = "; ".join(f.message for f in call.findings if f.severity == "alarm")
        super().__init__(f"{call.kind} rejected: {reasons}")


class AuditRuntime:
    """Operators over one lake, with registered tables and a ledger."""

    def __init__(
        self,
        lake: Path | str,
        *,
        ledger: AuditLedger | None = None,
        source_map: SourceMap | None = None,
        on_call: Callable[[OperatorCall], None] | None = None,
        mode: Literal["reject", "flag"] = "reject",
    ) -> None:
        """`on_call` sees every recorded call (the kernel publishes them to the host)."""
        self.lake = Path(lake)
        self.map = source_map if source_map is not None else index_lake(self.lake)
        self.index = SourceIndex(self.map)
        self.ledger = ledger if ledger is not None else AuditLedger()
        self.tables: dict[str, pd.DataFrame] = {}
        self.on_call = on_call
        self.mode = mode
        self._con = duckdb.connect()

    # -- the call protocol -----------------------------------------------------------

    def _call(
        self,
        kind: OperatorKind,
        inputs: Iterable[str],
        args: dict[str, Any],
        run: Callable[[], tuple[Observation, Any]],
        sql: str | None = None,
    ) -> Any:
        started = time.perf_counter()
        ctx = Context(kind=kind, args=args, tables=self.tables, ledger=self.ledger)
        if sql is not None:
            try:
                ctx.sql = parse_sql(self._con, sql)
            except duckdb.Error:
                ctx.sql = None  # DuckDB will report the syntax error when it runs
        before = run_operator_rules(ctx, "before")
        base = {
            "seq": self.ledger.next_seq,
            "kind": kind,
            "inputs": tuple(inputs),
            "args": json.loads(json.dumps(args, default=str)),
        }
        if self.mode == "reject" and any(f.severity == "alarm" for f in before):
            call = OperatorCall(
                **base,
                status="rejected",
                findings=tuple(before),
                seconds=time.perf_counter() - started,
            )
            self._record(call)
            raise OperatorRejected(call)
        try:
            observation, value = run()
        except (AuditError, duckdb.Error, OSError, ValueError, KeyError) as exc:
            call = OperatorCall(
                **base,
                status="error",
                findings=tuple(before),
                error=f"{type(exc).__name__}: {exc}",
                seconds=time.perf_counter() - started,
            )
            self._record(call)
            raise
        ctx.observation = observation
        after = run_operator_rules(ctx, "after")
        call = OperatorCall(
            **base,
            status="ok",
            observation=observation,
            findings=(*before, *after),
            seconds=time.perf_counter() - started,
        )
        self._record(call)
        return value

    def _record(self, call: OperatorCall) -> None:
        self.ledger.append(call)
        if self.on_call is not None:
            self.on_call(call)

    @property
    def last(self) -> OperatorCall:
        """The most recent call."""
        return self.ledger.calls[-1]

    # -- operators ----------------------------------------------------------------------

    def discover(self, query: str, excluded: Iterable[str] = (), k: int = 10) -> list[str]:
        """Paths of the `k` files that best match `query` (words or a path pattern)."""
        excluded = tuple(excluded)

        def run() -> tuple[Observation, Any]:
            hits = self.index.discover(query, excluded=excluded, k=k)
            paths = [h.path for h in hits]
            return DiscoverObservation(
                paths=tuple(paths), scores=tuple(h.score for h in hits)
            ), paths

        return self._call("discover", (), {"query": query, "excluded": excluded, "k": k}, run)

    def bash(self, command: str) -> str:
        """Output of a read-only inspection command (ls, head, wc, grep…) run in the lake."""

        def run() -> tuple[Observation, Any]:
            obs = run_readonly(command, self.lake)
            return obs, obs.output

        return self._call("bash", (), {"command": command}, run)

    def scan(
        self, file: str, *, sheet: str | None = None, table: str | None = None
    ) -> pd.DataFrame:
        """Load one source as a table (registered as `table`, default: the file's stem)."""
        source_id = self._source_id(file, sheet)
        name = table or _table_name(source_id)

        def run() -> tuple[Observation, Any]:
            frame = self._load(source_id)
            self.tables[name] = frame
            src = self.map.get(source_id)
            return ScanObservation(
                table=name,
                source=source_id,
                location=src.location,
                signature=table_signature(frame),
                columns=tuple(
                    ColumnInfo(name=str(c), dtype=str(t), nulls=int(frame[c].isna().sum()))
                    for c, t in frame.dtypes.items()
                ),
                rows=len(frame),
                preview=frame.head(PREVIEW_ROWS).to_string(max_colwidth=40),
                preview_rows=min(PREVIEW_ROWS, len(frame)),
            ), frame

        return self._call("scan", (source_id,), {"file": file, "sheet": sheet, "table": name}, run)

    def union_scan(
        self, files: Iterable[str], source_column: str = "source", table: str | None = None
    ) -> pd.DataFrame:
        """Stack sources by column name, labelling each row with its source."""
        ids = [self._source_id(f, None) for f in files]
        name = table or "union_" + "_".join(_table_name(i) for i in ids[:3])

        def run() -> tuple[Observation, Any]:
            frames = {i: self._load(i) for i in ids}
            all_cols = list(dict.fromkeys(c for f in frames.values() for c in f.columns))
            missing = {
                str(c): tuple(i for i, f in frames.items() if c not in f.columns) for c in all_cols
            }
            union = pd.concat(
                [f.assign(**{source_column: i}) for i, f in frames.items()], ignore_index=True
            )
            self.tables[name] = union
            return UnionScanObservation(
                table=name,
                sources=tuple(ids),
                source_column=source_column,
                rows_per_source={i: len(f) for i, f in frames.items()},
                columns=tuple(str(c) for c in all_cols),
                missing_columns={c: s for c, s in missing.items() if s},
            ), union

        return self._call(
            "union_scan",
            tuple(ids),
            {"files": tuple(ids), "source_column": source_column, "table": name},
            run,
        )

    def probe(self, table: str, columns: Iterable[str] | None = None) -> ProbeObservation:
        """Value frequencies, ranges, null rates and distinct counts of columns of a table."""
        cols = tuple(columns) if columns is not None else None

        def run() -> tuple[Observation, Any]:
            frame = self._table(table)
            names = cols if cols is not None else tuple(str(c) for c in frame.columns)
            unknown = [c for c in names if c not in frame.columns]
            if unknown:
                raise OperatorRefused(
                    f"probe: table {table!r} has no column(s) {unknown}; it has "
                    f"{[str(c) for c in frame.columns]}"
                )
            obs = ProbeObservation(
                table=table, profiles=tuple(_profile(frame[c], c) for c in names)
            )
            return obs, obs

        return self._call("probe", (table,), {"table": table, "columns": cols}, run)

    def query(
        self, sql: str, inputs: Iterable[str] | None = None, output: str | None = None
    ) -> pd.DataFrame:
        """Run DuckDB SQL over registered tables; register the result as `output`."""
        declared = tuple(inputs) if inputs is not None else tuple(self.tables)

        def run() -> tuple[Observation, Any]:
            unknown = [t for t in declared if t not in self.tables]
            if unknown:
                raise OperatorRefused(
                    f"query: input(s) {unknown} are not registered; registered: "
                    f"{sorted(self.tables)}"
                )
            con = duckdb.connect()
            try:
                for t in declared:
                    con.register(t, self.tables[t])
                frame = con.execute(sql).df()
            finally:
                con.close()
            if output:
                self.tables[output] = frame
            visible = frame.head(VISIBLE_RECORDS)
            return QueryObservation(
                output=output,
                columns=tuple(
                    ColumnInfo(name=str(c), dtype=str(t), nulls=int(frame[c].isna().sum()))
                    for c, t in frame.dtypes.items()
                ),
                rows=len(frame),
                records=tuple(_jsonable(r) for r in visible.to_dict(orient="records")),
            ), frame

        return self._call("query", declared, {"sql": sql, "output": output}, run, sql=sql)

    def batch(self, calls: Iterable[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Run several operator calls in order: ``[("scan", {"file": ...}), ...]``.

        Stops at the first rejection or error (it propagates); earlier results are
        recorded in the ledger either way.
        """
        ops: dict[str, Callable[..., Any]] = {
            "discover": self.discover,
            "bash": self.bash,
            "scan": self.scan,
            "union_scan": self.union_scan,
            "probe": self.probe,
            "query": self.query,
        }
        results = []
        for kind, kwargs in calls:
            if kind not in ops:
                raise OperatorRefused(f"batch: unknown operator {kind!r}; known: {sorted(ops)}")
            results.append(ops[kind](**kwargs))
        return results

    # -- helpers ------------------------------------------------------------------------

    def _source_id(self, file: str, sheet: str | None) -> str:
        if sheet is None and any(s.id == file for s in self.map.sources):
            return file
        path = file.replace("\\", "/").lstrip("./")
        candidates = [s for s in self.map.sources if s.location.path == path] or [
            s for s in self.map.sources if s.location.path.endswith("/" + path)
        ]
        if sheet is not None:
            candidates = [s for s in candidates if s.location.sheet == sheet]
        if len(candidates) == 1:
            return candidates[0].id
        if not candidates:
            raise SourceMapError(
                f"no source {file!r}"
                + (f" sheet {sheet!r}" if sheet else "")
                + f" in the lake {self.lake}"
            )
        raise SourceMapError(
            f"{file!r} holds several sources, name one: {[s.id for s in candidates]}"
        )

    def _load(self, source_id: str) -> pd.DataFrame:
        src = self.map.get(source_id)
        if src.kind != "table":
            raise OperatorRefused(f"{source_id} is not a table ({src.kind}); use bash to read it")
        for part in read_parts(self.lake / src.location.path):
            if (part.sheet, part.table) == (src.location.sheet, src.location.table):
                assert part.frame is not None
                return part.frame
        raise SourceMapError(f"{source_id} is no longer in {src.location.path}")

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self.tables:
            raise OperatorRefused(
                f"no registered table {name!r}; registered: {sorted(self.tables)}"
            )
        return self.tables[name]


def _table_name(source_id: str) -> str:
    stem = source_id.rsplit("/", 1)[-1].split("#")[0].rsplit(".", 1)[0]
    sheet = source_id.split("#", 1)[1] if "#" in source_id else ""
    raw = f"{stem}_{sheet}" if sheet else stem
    return "".join(ch if ch.isalnum() else "_" for ch in raw).strip("_").lower() or "t"


def _profile(col: pd.Series, name: str) -> ColumnProfile:
    counts = col.value_counts(dropna=True)
    rows = len(col)
    nulls = int(col.isna().sum())
    lo = hi = None
    ordered = pd.api.types.is_numeric_dtype(col) or pd.api.types.is_datetime64_any_dtype(col)
    if ordered and rows - nulls:
        lo, hi = _jsonable_value(col.min()), _jsonable_value(col.max())
    top = tuple((_jsonable_value(v), int(n)) for v, n in counts.head(TOP_VALUES).items())
    return ColumnProfile(
        name=str(name),
        dtype=str(col.dtype),
        rows=rows,
        nulls=nulls,
        null_rate=nulls / rows if rows else 0.0,
        distinct=len(counts),
        min=lo,
        max=hi,
        top=top,
        values_complete=len(counts) <= TOP_VALUES,
    )


def _jsonable_value(v: Any) -> Any:
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    item = getattr(v, "item", None)
    if callable(item):
        try:
            return item()
        except (ValueError, TypeError):
            return str(v)
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def _jsonable(record: dict[Any, Any]) -> dict[str, Any]:
    return {str(k): (None if _isna(v) else _jsonable_value(v)) for k, v in record.items()}


def _isna(v: Any) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


__all__ = ["AuditRuntime", "OperatorRejected"]
