"""Silent errors a cell's execution shows, without a model: what follows from such a cell
is not a result.

Each is a check of `CHECKS` (`stateguard.checks`) over one `CellContext`, returning a
`Finding` (a doubt) whose message is the note the model is shown; `FAILURES` names each
check for the attempt log:

- a whole Series printed after the label of a value the question asks for
  (`stateguard.audit.printchecks`);
- an equality filter on a value its column does not hold (`stateguard.audit.filterchecks`);
- a subset selected for an earlier question, read by one that does not ask for it
  (`stateguard.worker.scope`);
- a column just written that holds only missing values (`stateguard.audit.nanchecks`);
- a column written by a ``map``/``apply`` that is missing where its source holds a value
  (`stateguard.audit.mapchecks`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stateguard.audit.filterchecks import absent_filters
from stateguard.audit.filterchecks import describe as describe_absent_filters
from stateguard.audit.mapchecks import describe as describe_lost_values
from stateguard.audit.mapchecks import lost_values
from stateguard.audit.nanchecks import describe as describe_nan_columns
from stateguard.audit.nanchecks import nan_columns
from stateguard.audit.printchecks import describe as describe_labelled_series
from stateguard.checks import Basis, CheckRegistry, Finding
from stateguard.kernel import ExecutionResult, ProbeResult
from stateguard.worker.answer_format import AnswerSpec
from stateguard.worker.scope import ScopeLog

Probe = Callable[..., ProbeResult]


@dataclass(frozen=True)
class CellContext:
    """What the worker's checks see of one cell that ran."""

    code: str
    execution: ExecutionResult
    created: Sequence[str]
    """The versions the cell wrote."""
    probe: Probe
    spec: AnswerSpec | None
    scopes: ScopeLog
    turn: int
    question: str
    """The turn's opener (question with its context)."""


CHECKS: CheckRegistry[CellContext] = CheckRegistry("worker")

FAILURES: dict[str, str] = {
    "printed_series": "a Series printed where one value was meant",
    "absent_filter": "a filter on a value its column does not hold",
    "carried_subset": "a subset made for an earlier question",
    "blank_column": "a column written with only missing values",
    "lost_mapping": "a map or apply that left values missing",
}
"""Each check's name in the attempt log."""


def _doubt(check: str, note: str, *basis: Basis) -> list[Finding]:
    return [Finding(check=check, severity="doubt", message=note, basis=basis)]


@CHECKS.check(basis=("question", "execution"))
def printed_series(ctx: CellContext) -> list[Finding]:
    misprinted = [] if ctx.spec is None else ctx.spec.misprinted(ctx.execution.stdout)
    if not misprinted:
        return []
    note = describe_labelled_series(misprinted)
    return _doubt("printed_series", note, "question", "execution")


@CHECKS.check(basis=("code", "data"))
def absent_filter(ctx: CellContext) -> list[Finding]:
    empty = absent_filters(ctx.probe, ctx.code)
    if not empty:
        return []
    return _doubt("absent_filter", describe_absent_filters(empty), "code", "data")


@CHECKS.check(basis=("code", "question"))
def carried_subset(ctx: CellContext) -> list[Finding]:
    carried = ctx.scopes.carried(ctx.turn, ctx.code, ctx.question)
    if not carried:
        return []
    frames = sorted({c.selections[0].split("[", 1)[0] for c in carried})
    note = (
        "Note: "
        + "; ".join(c.describe() for c in carried)
        + f". Compute this question's result from the whole data ({', '.join(frames)}),"
        " unless the question asks for that subset."
    )
    return _doubt("carried_subset", note, "code", "question")


@CHECKS.check(basis=("lineage", "data"))
def blank_column(ctx: CellContext) -> list[Finding]:
    blank = nan_columns(ctx.probe, ctx.created) if ctx.created else []
    if not blank:
        return []
    return _doubt("blank_column", describe_nan_columns(blank), "lineage", "data")


@CHECKS.check(basis=("code", "data"))
def lost_mapping(ctx: CellContext) -> list[Finding]:
    lost = lost_values(ctx.probe, ctx.code)
    if not lost:
        return []
    note = (
        "Note: "
        + "; ".join(describe_lost_values(f) for f in lost[:3])
        + ". Give every value a result (add the missing keys, or `.fillna(...)` "
        "after the map), or drop those rows on purpose."
    )
    return _doubt("lost_mapping", note, "code", "data")


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
) -> list[Finding]:
    """The doubts about a cell that ran (none for a cell that failed); ``created``: the
    versions it wrote, ``question``: the turn's opener (question with its context)."""
    if not execution.ok:
        return []
    ctx = CellContext(code, execution, created, probe, spec, scopes, turn, question)
    return CHECKS.run(ctx)
