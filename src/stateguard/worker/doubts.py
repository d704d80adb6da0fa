"""Silent errors a cell's execution shows, without a model: what follows from such a cell
is not a result.

- a whole Series printed after the label of a value the question asks for
  (`stateguard.audit.printchecks`);
- an equality filter on a value its column does not hold (`stateguard.audit.filterchecks`);
- a subset selected for an earlier question, read by one that does not ask for it
  (`stateguard.worker.scope`);
- a column just written that holds only missing values (`stateguard.audit.nanchecks`);
- a column written by a ``map``/``apply`` that is missing where its source holds a value
  (`stateguard.audit.mapchecks`).

Each is a `Doubt`: a short name for the attempt log and the note the model is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from stateguard.audit.filterchecks import absent_filters
from stateguard.audit.filterchecks import describe as describe_absent_filters
from stateguard.audit.mapchecks import describe as describe_lost_values
from stateguard.audit.mapchecks import lost_values
from stateguard.audit.nanchecks import describe as describe_nan_columns
from stateguard.audit.nanchecks import nan_columns
from stateguard.audit.printchecks import describe as describe_labelled_series
from stateguard.kernel import ExecutionResult, ProbeResult
from stateguard.worker.answer_format import AnswerSpec
from stateguard.worker.scope import ScopeLog

Probe = Callable[..., ProbeResult]


class Doubt(NamedTuple):
    """One silent error: what it is (for the attempt log) and what the model is told."""

    failure: str
    note: str


def silent_errors(
    code: str,
    execution: ExecutionResult,
    created: Sequence[str],
    *,
    probe: Probe,
    spec: AnswerSpec | None,
    scopes: ScopeLog,
    turn: int,
    question: str,
) -> list[Doubt]:
    """The doubts about a cell that ran (none for a cell that failed); ``created``: the
    versions it wrote, ``question``: the turn's opener (question with its context)."""
    if not execution.ok:
        return []
    out: list[Doubt] = []
    misprinted = [] if spec is None else spec.misprinted(execution.stdout)
    if misprinted:
        out.append(
            Doubt(
                "a Series printed where one value was meant",
                describe_labelled_series(misprinted),
            )
        )
    empty = absent_filters(probe, code)
    if empty:
        out.append(
            Doubt("a filter on a value its column does not hold", describe_absent_filters(empty))
        )
    carried = scopes.carried(turn, code, question)
    if carried:
        frames = sorted({c.selections[0].split("[", 1)[0] for c in carried})
        out.append(
            Doubt(
                "a subset made for an earlier question",
                "Note: "
                + "; ".join(c.describe() for c in carried)
                + f". Compute this question's result from the whole data ({', '.join(frames)}),"
                " unless the question asks for that subset.",
            )
        )
    blank = nan_columns(probe, created) if created else []
    if blank:
        out.append(Doubt("a column written with only missing values", describe_nan_columns(blank)))
    lost = lost_values(probe, code)
    if lost:
        out.append(
            Doubt(
                "a map or apply that left values missing",
                "Note: "
                + "; ".join(describe_lost_values(f) for f in lost[:3])
                + ". Give every value a result (add the missing keys, or `.fillna(...)` "
                "after the map), or drop those rows on purpose.",
            )
        )
    return out
