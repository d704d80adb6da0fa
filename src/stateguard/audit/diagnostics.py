"""What the join guard reports: one record per merge/join/concat, with typed diagnostics.

These models cross from the kernel to the host. The in-kernel guard
(`stateguard.audit.joinguard`) builds them and publishes a `JoinCellReport` as
private display data under `JOIN_MIME`; the host reads it back from an
`ExecutionResult` with `join_report`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

#: MIME type under which the in-kernel join guard publishes a cell's `JoinCellReport`.
JOIN_MIME = "application/vnd.stateguard.audit.join+json"

Operation = Literal["merge", "join", "concat"]
"""`pd.merge` and `DataFrame.merge` are both "merge"; `DataFrame.join` is "join"."""

DiagnosticKind = Literal[
    "cross_product",
    "positional_pairing",
    "many_to_many",
    "near_unique_key",
    "dropped_rows",
    "unmatched_keys",
    "key_mismatch",
    "key_format",
    "union_fills_nulls",
    "union_drops_columns",
    "index_misaligned",
]

Severity = Literal["error", "warning"]
"""An "error" is a result that is almost surely not what was meant (rejected in reject mode);
a "warning" is a lossy or lopsided operation that needs a stated reason."""


class JoinDiagnostic(BaseModel):
    """One finding about one operation, with the evidence that supports it."""

    model_config = ConfigDict(frozen=True)

    kind: DiagnosticKind
    severity: Severity
    message: str
    """A full sentence naming the frames, keys and rows involved."""
    side: Literal["left", "right", "both"] | None = None
    rows: int | None = None
    """The number of rows the finding is about (dropped, unmatched, produced by fan-out…)."""
    keys: tuple[str, ...] = ()
    """Example key values (as reprs), at most `MAX_EXAMPLES`."""
    columns: tuple[str, ...] = ()
    """Columns the finding is about (for union and key findings)."""


class FrameRef(BaseModel):
    """An input or output of an operation: the user names bound to it, and its shape."""

    model_config = ConfigDict(frozen=True)

    names: tuple[str, ...] = ()
    """User variables bound to this very object when the call ran (empty: an expression)."""
    rows: int
    columns: int

    @property
    def label(self) -> str:
        """`a` for a named frame, else ``<expression>``."""
        return f"`{self.names[0]}`" if self.names else "<expression>"


class JoinRecord(BaseModel):
    """One guarded call: inputs, keys, row counts in and out, key facts, findings."""

    model_config = ConfigDict(frozen=True)

    operation: Operation
    how: str
    """Join type ("inner", "left", "right", "outer", "cross"); for concat "outer"/"inner"."""
    how_stated: bool | None = None
    """merge/join: the call passed ``how`` itself (False: pandas' default; None: unknown)."""
    axis: int = 0
    """concat only: 0 stacks rows, 1 pairs rows by index."""
    inputs: tuple[FrameRef, ...]
    output_rows: int
    output_names: tuple[str, ...] = ()
    """User variables bound to the result at the end of the cell (empty: not kept)."""
    left_keys: tuple[str, ...] = ()
    """Key columns (or ``<index>``) of the left input; empty for cross and concat."""
    right_keys: tuple[str, ...] = ()
    left_unique: bool | None = None
    """Whether the left key is unique (None when not computed, e.g. concat)."""
    right_unique: bool | None = None
    left_unmatched: int | None = None
    """Left rows whose key has no match on the right."""
    right_unmatched: int | None = None
    facts_from: Literal["indexers", "key values"] | None = None
    """Where the row facts came from: pandas' join indexers, or hashing the key values."""
    line: int | None = None
    """Line of the cell (or of the user function `where`) that made the call."""
    where: str | None = None
    """``<cell>`` or the name of the user function that made the call."""
    diagnostics: tuple[JoinDiagnostic, ...] = ()
    check_error: str | None = None
    """Set when the guard itself failed on this call (the user's result is unaffected)."""
    check_seconds: float = 0.0
    """Time the guard spent on this call after the operation returned."""

    @property
    def errors(self) -> tuple[JoinDiagnostic, ...]:
        """The diagnostics of severity "error"."""
        return tuple(d for d in self.diagnostics if d.severity == "error")


class JoinCellReport(BaseModel):
    """Every guarded call one cell made, in call order."""

    model_config = ConfigDict(frozen=True)

    records: tuple[JoinRecord, ...] = ()
    mode: Literal["flag", "reject"] = "flag"
    truncated: int = 0
    """Calls beyond the per-cell record cap that were checked but not reported."""

    @property
    def diagnostics(self) -> tuple[JoinDiagnostic, ...]:
        """All findings of the cell, in call order."""
        return tuple(d for r in self.records for d in r.diagnostics)

    def describe(self) -> str:
        """The findings as observation text for an agent (empty when there are none)."""
        lines = []
        for r in self.records:
            where = f" (line {r.line})" if r.line is not None else ""
            lines.extend(f"{d.severity}: {d.message}{where}" for d in r.diagnostics)
        return "\n".join(lines)


def join_report(private: Iterable[dict[str, Any]]) -> JoinCellReport | None:
    """The join guard's report among an execution's private payloads, if it sent one.

    Pass `ExecutionResult.private`. Returns None when the guard is not installed
    or the cell made no guarded call.
    """
    for payload in private:
        if payload.get("mime") == JOIN_MIME:
            return JoinCellReport.model_validate(payload.get("data"))
    return None
