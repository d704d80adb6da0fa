"""The data checks of a cell that ran, once for every consumer: what it printed, filtered
and wrote, against the data.

Five silent errors a cell's execution shows without a model, each read by
`stateguard.audit` (all but the first by a copy-on-write probe of the session after the
cell):

- `printed_series`: a whole Series printed after the label of a value the question asks
  for (`stateguard.audit.printchecks`);
- `absent_filter`: an equality filter on a value its column does not hold
  (`stateguard.audit.filterchecks`);
- `blank_column`: a column the cell wrote that holds only missing values
  (`stateguard.audit.nanchecks`);
- `lost_mapping`: a column written by a ``map``/``apply`` that is missing where its source
  holds a value (`stateguard.audit.mapchecks`);
- `unmatched_rename`: a ``rename(columns={...})`` key that is not a column of the table it
  is applied to, so the rename skipped it (`stateguard.audit.renamechecks`).

Each returns a `Found`: the facts, and the note that words them for the agent. None
decides a severity: the worker's doubts (`stateguard.worker.doubts`) show the note to the
model; the verifier's rules (`stateguard.verify.rules`) weigh the facts by the step (a
result step, one that states a finding) and word them for a rationale. A cell that did
not run (no execution, or one that failed) shows nothing, and is not probed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from stateguard.audit.filterchecks import AbsentFilter, Probe, absent_filters
from stateguard.audit.filterchecks import describe as describe_absent_filters
from stateguard.audit.mapchecks import LostValues, lost_values
from stateguard.audit.mapchecks import describe as describe_lost_values
from stateguard.audit.nanchecks import NanColumn, nan_columns
from stateguard.audit.nanchecks import describe as describe_nan_columns
from stateguard.audit.printchecks import LabelledSeries
from stateguard.audit.printchecks import describe as describe_labelled_series
from stateguard.audit.renamechecks import UnmatchedRename, unmatched_renames
from stateguard.audit.renamechecks import describe as describe_unmatched_renames
from stateguard.kernel import ExecutionResult

__all__ = [
    "PROBE_TIMEOUT",
    "AskedValues",
    "Found",
    "Probe",
    "absent_filter",
    "blank_column",
    "lost_mapping",
    "printed_series",
    "unmatched_rename",
]

T = TypeVar("T")

PROBE_TIMEOUT = 20.0
"""Seconds a probe may take when the caller names no limit (the audit's own default)."""


@dataclass(frozen=True)
class Found(Generic[T]):
    """What one data check found in a cell: its facts, and the note that words them."""

    facts: tuple[T, ...] = ()
    note: str = ""
    """The facts worded for the agent (``Note: …``, with what to do about them); "" when
    there are none."""


class AskedValues(Protocol):
    """What a question asks to be shown as single values: the worker's
    `stateguard.worker.answer_format.AnswerSpec` (a layer above this one)."""

    def misprinted(self, stdout: str) -> list[LabelledSeries]:
        """The Series printed in ``stdout`` where one of those values was meant."""
        ...


def _ran(execution: ExecutionResult | None) -> bool:
    return execution is not None and execution.ok


def printed_series(
    execution: ExecutionResult | None, spec: AskedValues | None
) -> Found[LabelledSeries]:
    """The Series the cell printed after the label of a value ``spec`` asks for (none
    without a spec: the question asks for no single value)."""
    if execution is None or not execution.ok or spec is None:
        return Found()
    found = spec.misprinted(execution.stdout)
    if not found:
        return Found()
    return Found(tuple(found), describe_labelled_series(found))


def absent_filter(
    code: str,
    execution: ExecutionResult | None,
    probe: Probe,
    *,
    timeout: float = PROBE_TIMEOUT,
) -> Found[AbsentFilter]:
    """The equality filters of ``code`` on a value their column does not hold (one probe,
    none when the code compares no column with a constant)."""
    if not _ran(execution):
        return Found()
    found = absent_filters(probe, code, timeout=timeout)
    if not found:
        return Found()
    return Found(tuple(found), describe_absent_filters(found))


def blank_column(
    created: Sequence[str],
    execution: ExecutionResult | None,
    probe: Probe,
    *,
    reads: Sequence[str] = (),
    timeout: float = PROBE_TIMEOUT,
) -> Found[NanColumn]:
    """The columns among ``created`` (the versions the cell wrote) that hold only missing
    values now, less those carried over from a column of another table that the cell
    read (``reads``, the versions it read) and that was empty already (one probe, none
    when the cell wrote no column)."""
    if not _ran(execution) or not created:
        return Found()
    found = nan_columns(probe, created, timeout=timeout, reads=reads)
    if not found:
        return Found()
    return Found(tuple(found), describe_nan_columns(found))


def lost_mapping(
    code: str,
    execution: ExecutionResult | None,
    probe: Probe,
    *,
    timeout: float = PROBE_TIMEOUT,
) -> Found[LostValues]:
    """The columns ``code`` wrote as a ``map``/``apply`` of another that are missing where
    their source holds a value (one probe, none when the code maps nothing)."""
    if not _ran(execution):
        return Found()
    found = lost_values(probe, code, timeout=timeout)
    if not found:
        return Found()
    note = (
        "Note: "
        + "; ".join(describe_lost_values(f) for f in found[:3])
        + ". Give every value a result (add the missing keys, or `.fillna(...)` "
        "after the map), or drop those rows on purpose."
    )
    return Found(tuple(found), note)


def unmatched_rename(
    code: str,
    execution: ExecutionResult | None,
    probe: Probe,
    *,
    timeout: float = PROBE_TIMEOUT,
) -> Found[UnmatchedRename]:
    """The column renames of ``code`` with a key their table does not hold, so pandas
    skipped it (one probe, none when the code renames no column)."""
    if not _ran(execution):
        return Found()
    found = unmatched_renames(probe, code, timeout=timeout)
    if not found:
        return Found()
    return Found(tuple(found), describe_unmatched_renames(found))
