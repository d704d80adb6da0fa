"""What typed operators record: declared inputs, arguments, the observation, findings.

Every operator call becomes one `OperatorCall` (frozen, JSON-serializable) in the
audit ledger. Its `observation` is a discriminated union on `kind`, one model
per operator. Its findings are what the validation rules said about the call, as
`stateguard.finding.Finding`: ``check`` names the rule; an ``alarm`` refused the call
(or, in flag mode, would have); a ``note`` is only reported. ``facts["calls"]`` holds
the sequence numbers (as strings) of the earlier calls whose observations the rule used.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stateguard.audit.sources import ColumnInfo, SourceLocation
from stateguard.finding import Finding

OperatorKind = Literal["discover", "bash", "scan", "union_scan", "probe", "query"]


class DiscoverObservation(BaseModel):
    """Ranked files for a query."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["discover"] = "discover"
    paths: tuple[str, ...]
    scores: tuple[float, ...]


class BashObservation(BaseModel):
    """Output and exit status of a read-only inspection command."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["bash"] = "bash"
    exit_status: int
    output: str
    truncated: bool = False


class ScanObservation(BaseModel):
    """A source loaded as a table: provenance, schema, rows, preview."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["scan"] = "scan"
    table: str
    """Name under which the table is registered for `probe` and `query`."""
    source: str
    location: SourceLocation
    signature: str
    columns: tuple[ColumnInfo, ...]
    rows: int
    preview: str
    preview_rows: int


class UnionScanObservation(BaseModel):
    """Sources stacked by column name, with a source label column."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["union_scan"] = "union_scan"
    table: str
    sources: tuple[str, ...]
    source_column: str
    rows_per_source: dict[str, int]
    columns: tuple[str, ...]
    missing_columns: dict[str, tuple[str, ...]] = {}
    """Column -> the sources that lack it (their rows hold nulls there)."""


class ColumnProfile(BaseModel):
    """Value facts of one column."""

    model_config = ConfigDict(frozen=True)

    name: str
    dtype: str
    rows: int
    nulls: int
    null_rate: float
    distinct: int
    min: Any = None
    max: Any = None
    top: tuple[tuple[Any, int], ...] = ()
    """Most frequent values with their counts."""
    values_complete: bool = False
    """True when `top` lists every distinct value (so an absent value is truly absent)."""


class ProbeObservation(BaseModel):
    """Frequencies, ranges, null rates and distinct counts of some columns of a table."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["probe"] = "probe"
    table: str
    profiles: tuple[ColumnProfile, ...]


class QueryObservation(BaseModel):
    """A DuckDB query over registered tables: result schema, row count, visible records."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["query"] = "query"
    output: str | None = None
    """Name the result was registered under (None: not registered)."""
    columns: tuple[ColumnInfo, ...] = ()
    rows: int = 0
    records: tuple[dict[str, Any], ...] = ()
    """The first rows, as shown to the agent."""


Observation = Annotated[
    DiscoverObservation
    | BashObservation
    | ScanObservation
    | UnionScanObservation
    | ProbeObservation
    | QueryObservation,
    Field(discriminator="kind"),
]


class OperatorCall(BaseModel):
    """One operator call as the ledger keeps it."""

    model_config = ConfigDict(frozen=True)

    seq: int
    kind: OperatorKind
    inputs: tuple[str, ...] = ()
    """Declared inputs: source ids, paths or registered table names."""
    args: dict[str, Any] = {}
    status: Literal["ok", "rejected", "error"]
    observation: Observation | None = None
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    seconds: float = 0.0

    def describe(self) -> str:
        """One line per finding (or the error), for an agent's observation."""
        lines = [
            f"{'reject' if f.severity == 'alarm' else 'flag'} [{f.check}]: {f.message}"
            for f in self.findings
        ]
        if self.error:
            lines.append(f"error: {self.error}")
        return "\n".join(lines)
