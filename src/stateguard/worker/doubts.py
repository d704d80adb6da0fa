"""Silent errors a cell's execution shows, without a model: what follows from such a cell
is not a result.

Each is a check of `CHECKS` (`stateguard.checks`) over one `CellContext`, returning a
`Finding` (a doubt) whose message is the note the model is shown; `FAILURES` names each
check for the attempt log:

- a whole Series printed after the label of a value the question asks for;
- an equality filter on a value its column does not hold;
- a subset selected for an earlier question, read by one that does not ask for it, or
  rows selected inline on a value as cells of an earlier turn did, for a question that
  does not name it (`stateguard.worker.scope`);
- a column just written that holds only missing values;
- a column written by a ``map``/``apply`` that is missing where its source holds a value;
- a ``rename(columns={...})`` key the renamed table does not hold (pandas skips it);
- a table the worker loaded from a data file, bound by the cell to something else
  (``enrolments = enrolments.shape[0]``): every later step that reads it breaks;
- such a table read again from its file, without columns earlier cells added to it (a
  merged ``cuisine``): every later step that uses them breaks;
- a column set to one literal value in every row (``enrolments['department'] =
  'Unknown'``) while another table of the session holds that column: a placeholder for
  data the session has, so grouping or filtering on it means nothing;
- a Series of one value per row shown where the question asks for one number over the
  rows (a total, a mean…): a reduction that bound to one term only (``a['x'].sum() * 0.9
  + a['y'] * 0.03``) (`per_row_series`);
- a loaded table merged again with columns it already holds, which pandas then keeps
  twice under suffixes (``sector_x``, ``sector_y``) and no longer under their own name
  (`remerged_table`);
- a cell that computes nothing and only writes numbers (``1400``, ``print(1400)``): what
  it shows is the model's own guess, so it grounds no answer (`literal_numbers`);
- the totals of two columns of one table multiplied together (``t['w'].sum() *
  t['r'].sum()``), where the total of their per-row product was meant
  (`stateguard.audit.totals`);
- the first (or last) element of a Series of many values in no order shown
  (``print(pct.iloc[0])``): one row's value, neither a reduction nor an extreme
  (`stateguard.audit.picks`);
- the largest (or smallest) of a grouping's totals shown where the question asks for one
  total, mean, median or count over the rows and names no group, no extreme and nothing
  "per" (``t.groupby('depot')['profit'].sum().max()`` for "the total gross profit"): one
  group's figure (`extreme_of_groups`, `stateguard.audit.extremes`);
- the label of a grouping's extreme shown as a day (``2025-06-11``) where the question
  asks for a month (``YYYY-MM``): the rows were grouped by day, and the day with the
  largest total need not fall in the month with the largest total (`day_for_month`);
- the mean of per-row ratios (``(t['profit'] / t['billed']).mean()``) shown where the
  question asks for one share: the ratio of the totals was meant (`mean_of_ratios`,
  `stateguard.audit.ratios`);
- a flat amount the task states ("a flat disposal charge of 1.20") multiplied by a
  per-row quantity (``r['trays'] * r['tray_price'] * 1.20``): a flat amount is charged
  once per row it applies to (`scaled_flat_amount`, `stateguard.audit.flat`).

All but the subset and the rebound or reloaded table (which need the worker's own
records: the turns' selections, the tables it loaded and their columns), the
placeholder column, the written numbers, the multiplied totals, the scaled flat amount
and the picked element
(worker-only notes), and the grouped extremes (worker-only notes) are the data checks the
verifier runs too (`stateguard.checks.data`), which find the facts and word the note; here
they are doubts.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stateguard.audit import extremes, flat, picks, ratios, totals
from stateguard.audit.filterchecks import probe_json
from stateguard.audit.printchecks import ShownSeries, shown_series
from stateguard.checks import Basis, CheckRegistry, Finding, data
from stateguard.checks.data import Probe
from stateguard.kernel import ExecutionResult, namespace
from stateguard.numbers import values_in
from stateguard.question import aggregate_words, flat_amounts
from stateguard.types import VarKey
from stateguard.worker.answer_format import AnswerSpec
from stateguard.worker.error_context import assigned_names, describe_names, holders_of
from stateguard.worker.grounding import unseen_numbers
from stateguard.worker.prompts import observation_notes, render
from stateguard.worker.scope import ScopeLog


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
    tables: Mapping[str, str] = field(default_factory=dict)
    """The tables the worker loaded before the first question: name -> ``data/...`` file."""
    columns_before: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """The columns each loaded table held before the cell ran, as far as the worker saw."""
    statistic: str | None = None
    """The statistic the turn's question asks for (`QuestionSpec.statistic`)."""
    seen: Sequence[str] = ()
    """What the session showed before the cell (outputs, the turn's question and context)."""
    reads: Sequence[str] = ()
    """The versions the cell read (lineage's)."""
    contexts: Sequence[str] = ()
    """The contexts of the task's turns so far (what the user stated with the questions)."""


CHECKS: CheckRegistry[CellContext] = CheckRegistry("worker")

FAILURES: dict[str, str] = {
    "printed_series": "a Series printed where one value was meant",
    "absent_filter": "a filter on a value its column does not hold",
    "carried_subset": "a subset made for an earlier question",
    "carried_filter": "rows selected as for an earlier question",
    "blank_column": "a column written with only missing values",
    "lost_mapping": "a map or apply that left values missing",
    "unmatched_rename": "a rename of a column the table does not hold",
    "rebound_table": "a loaded table replaced by another value",
    "reloaded_table": "a loaded table read again, losing the columns added to it",
    "placeholder_column": "a column filled with one made-up value that another table holds",
    "written_numbers": "a cell that only wrote numbers, computing nothing",
    "per_row_series": "a Series of one value per row where one number was asked",
    "remerged_table": "a table merged again with columns it already held",
    "multiplied_totals": "the totals of two columns multiplied together",
    "first_element": "one element of an unordered Series shown as the result",
    "extreme_of_groups": "the extreme of a grouping's figures where one over all rows was asked",
    "day_for_month": "a day's grouping shown where a month was asked",
    "mean_of_ratios": "the mean of per-row ratios where one share was asked",
    "scaled_flat_amount": "a flat amount multiplied by a per-row quantity",
}
"""Each check's name in the attempt log."""

VALUE_DOUBTS = frozenset(
    {
        "absent_filter",
        "carried_subset",
        "carried_filter",
        "multiplied_totals",
        "first_element",
        "extreme_of_groups",
        "day_for_month",
        "mean_of_ratios",
        "scaled_flat_amount",
    }
)
"""The checks whose finding says the value the cell showed is not the one meant (a
product of totals, a mean of ratios, one group's figure, a flat amount scaled…), as
against those about the session's state (a table rebound or reloaded) or the form of the
output: an answer that is such a value is held back once (`worker.loop`)."""

SESSION_FAILURES: dict[str, str] = {
    "replayed_cell": "an earlier turn's cell run again, showing the same",
    "narrowed_column": "a column defined again from fewer of its columns",
}
"""The attempt-log names of the doubts the worker's loop finds itself, from what it keeps
of earlier turns (their cells and outputs) and the session's lineage graph, which a
`CellContext` does not hold."""


def _doubt(check: str, note: str, *basis: Basis) -> list[Finding]:
    return [Finding(check=check, severity="doubt", message=note, basis=basis)]


@CHECKS.check(basis=("question", "execution"))
def printed_series(ctx: CellContext) -> list[Finding]:
    found = data.printed_series(ctx.execution, ctx.spec)
    return _doubt("printed_series", found.note, "question", "execution") if found.facts else []


@CHECKS.check(basis=("code", "data"))
def absent_filter(ctx: CellContext) -> list[Finding]:
    found = data.absent_filter(ctx.code, ctx.execution, ctx.probe)
    return _doubt("absent_filter", found.note, "code", "data") if found.facts else []


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


@CHECKS.check(basis=("code", "question"))
def carried_filter(ctx: CellContext) -> list[Finding]:
    """The cell selects rows on a value inline, as cells of an earlier turn did, while
    this turn's question mentions none of the values it selects on (`ScopeLog.
    carried_filters`): a cell copied from the turn before, with the earlier question's
    subset."""
    carried = ctx.scopes.carried_filters(ctx.turn, ctx.code, ctx.question)
    if not carried or ctx.scopes.carried(ctx.turn, ctx.code, ctx.question):
        return []  # a subset read by name is `carried_subset`'s
    note = render(
        observation_notes()["carried_filter"],
        selections=" and ".join(f"`{c.selection}`" for c in carried[:2]),
        turn=carried[0].turn,
        frames=", ".join(sorted({f"`{c.frame}`" for c in carried})),
    )
    return _doubt("carried_filter", note, "code", "question")


@CHECKS.check(basis=("lineage", "data"))
def blank_column(ctx: CellContext) -> list[Finding]:
    found = data.blank_column(ctx.created, ctx.execution, ctx.probe, reads=ctx.reads)
    return _doubt("blank_column", found.note, "lineage", "data") if found.facts else []


@CHECKS.check(basis=("code", "data"))
def lost_mapping(ctx: CellContext) -> list[Finding]:
    found = data.lost_mapping(ctx.code, ctx.execution, ctx.probe)
    return _doubt("lost_mapping", found.note, "code", "data") if found.facts else []


@CHECKS.check(basis=("code", "data"))
def unmatched_rename(ctx: CellContext) -> list[Finding]:
    found = data.unmatched_rename(ctx.code, ctx.execution, ctx.probe)
    return _doubt("unmatched_rename", found.note, "code", "data") if found.facts else []


@CHECKS.check(basis=("code", "data"))
def rebound_table(ctx: CellContext) -> list[Finding]:
    names = [n for n in assigned_names(ctx.code) if n in ctx.tables]
    if not names:
        return []
    notes = [
        render(observation_notes()["rebound_table"], name=n, value=v[:80], path=ctx.tables[n])
        for n, v in describe_names(ctx.probe, names).items()
        if n in ctx.tables and not v.startswith("DataFrame")
    ]
    return _doubt("rebound_table", "\n".join(notes), "code", "data") if notes else []


@CHECKS.check(basis=("code", "data"))
def reloaded_table(ctx: CellContext) -> list[Finding]:
    """A loaded table bound again to a file read (``orders = pd.read_csv(...)``) that no
    longer has columns earlier cells added to it (a merged ``cuisine``, a built
    ``payout``): every later step that uses them fails, or reads them from nowhere."""
    names = [n for n in read_into(ctx.code) if n in ctx.tables and ctx.columns_before.get(n)]
    if not names:
        return []
    after = probe_json(ctx.probe, namespace.call("columns", names), 10)
    if not isinstance(after, dict):
        return []
    notes = []
    for n in names:
        now = after.get(n)
        if not isinstance(now, list):
            continue
        lost = [c for c in ctx.columns_before[n] if c not in now]
        if lost:
            notes.append(
                render(
                    observation_notes()["reloaded_table"],
                    name=n,
                    path=ctx.tables[n],
                    columns=", ".join(repr(c) for c in lost[:6]),
                )
            )
    return _doubt("reloaded_table", "\n".join(notes), "code", "data") if notes else []


@CHECKS.check(basis=("code", "data"))
def remerged_table(ctx: CellContext) -> list[Finding]:
    """A loaded table the cell wrote that held a column before it (``sector``, merged in
    an earlier step) and now holds it only twice under pandas' merge suffixes
    (``sector_x``, ``sector_y``): every later step that uses ``sector`` fails. The note
    gives the line that undoes it, from the table's own names."""
    written = {VarKey.name_of(v).split("[")[0].split(".")[0] for v in ctx.created}
    names = sorted(n for n in written if n in ctx.tables and ctx.columns_before.get(n))
    if not names:
        return []
    after = probe_json(ctx.probe, namespace.call("columns", names), 10)
    if not isinstance(after, dict):
        return []
    notes = []
    for n in names:
        now = after.get(n)
        if not isinstance(now, list):
            continue
        doubled = [
            c for c in ctx.columns_before[n] if c not in now and f"{c}_x" in now and f"{c}_y" in now
        ]
        if doubled:
            drop = ", ".join(repr(f"{c}_y") for c in doubled)
            rename = ", ".join(f"{f'{c}_x'!r}: {c!r}" for c in doubled)
            notes.append(
                render(
                    observation_notes()["remerged_table"],
                    name=n,
                    columns=", ".join(repr(c) for c in doubled[:6]),
                    suffixed=", ".join(f"'{c}_x', '{c}_y'" for c in doubled[:3]),
                    undo=f"{n} = {n}.drop(columns=[{drop}]).rename(columns={{{rename}}})",
                )
            )
    return _doubt("remerged_table", "\n".join(notes), "code", "data") if notes else []


def read_into(code: str) -> list[str]:
    """The plain names ``code`` binds to a file read (``x = pd.read_csv(...)``, any
    ``read_*`` call), in order ([] when the code does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if not called.startswith("read_"):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id not in out:
                out.append(target.id)
    return out


@CHECKS.check(basis=("code", "data"))
def placeholder_column(ctx: CellContext) -> list[Finding]:
    """A column set to one literal in every row while another table holds that column. A
    number the turn's question or context states (a flat fee of 3.00), or that an output
    of the session showed (`seen`), is a value given, not a placeholder, and is left
    alone."""
    literals = column_literals(ctx.code)
    if not literals:
        return []  # most cells: no need to read every output for its numbers
    stated = [*values_in(ctx.question), *(x for t in ctx.seen for x in values_in(t))]
    pairs = [
        pair
        for pair, value in literals.items()
        if not (isinstance(value, int | float) and not isinstance(value, bool) and value in stated)
    ]
    if not pairs:
        return []
    constant = probe_json(ctx.probe, namespace.call("constant_columns", pairs), 10)
    notes = []
    try:
        found = [(str(f), str(c), str(v)) for f, c, v in constant or []]
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return []
    for frame, column, value in found[:2]:
        for holder, _shared, unique, _columns, _keys in holders_of(ctx.probe, column, [frame])[:1]:
            section = "placeholder_column_join" if len(unique) == 1 else "placeholder_column"
            notes.append(
                render(
                    observation_notes()[section],
                    frame=frame,
                    key=repr(column),
                    value=value,
                    holder=holder,
                    on=repr(unique[0]) if unique else "",
                )
            )
    return _doubt("placeholder_column", "\n".join(notes), "code", "data") if notes else []


def literal_columns(code: str) -> list[tuple[str, str]]:
    """``(frame, column)`` for each ``frame['column'] = <literal>`` of ``code`` (a string,
    number, bool or None), at any depth ([] when the code does not parse)."""
    return list(column_literals(code))


def column_literals(code: str) -> dict[tuple[str, str], object]:
    """`literal_columns` with the literal each pair is first set to, in code order."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    found: dict[tuple[str, str], object] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
            continue
        for target in node.targets:
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
            ):
                pair = (target.value.id, target.slice.value)
                found.setdefault(pair, node.value.value)
    return found


@CHECKS.check(basis=("code",))
def written_numbers(ctx: CellContext) -> list[Finding]:
    """A cell that computes nothing and only shows numbers (``1400``, ``print(1400)``,
    ``returned = 1400; returned``), one of which nothing showed before (`seen`): the
    model's own guess, not a result. A parameter set or echoed (``rate = 0.15`` for a
    stated 15 %) is left alone."""
    numbers = literal_numbers(ctx.code)
    guessed = [
        n
        for n in numbers
        if unseen_numbers(n, ctx.seen) and unseen_numbers(f"{float(n) * 100:g}", ctx.seen)
    ]  # a stated percent as a fraction (0.15 for 15 %) was seen
    if not guessed:
        return []
    note = render(observation_notes()["written_numbers"], numbers=", ".join(numbers[:4]))
    return _doubt("written_numbers", note, "code")


REDUCING = frozenset({"sum", "mean", "median", "share", "count"})
"""The statistics (`QuestionSpec.statistic`) that reduce the rows to one number."""

_ROWS = 10
"""The fewest values of a per-row Series that `per_row_series` speaks of."""


def _per_row(text: str) -> ShownSeries | None:
    """``text`` as a Series of ten values or more indexed by row position (``0, 1, 3,
    …``), not all alike; None for anything else (a grouping is indexed by its groups)."""
    series = shown_series(text) if text.strip() else None
    if (
        series is None
        or series.length < _ROWS
        or not all(label.isdigit() for label, _ in series.rows)
        or len({value for _, value in series.rows}) < 2
    ):
        return None
    return series


@CHECKS.check(basis=("question", "execution"))
def per_row_series(ctx: CellContext) -> list[Finding]:
    """The cell shows a Series of one value per row (`_per_row`) while the question asks
    for one number over the rows (`REDUCING`), or, in a form of labelled single values
    (``shipments: <count>, base_charge: <total …>``), for a number among them and the
    Series is all the cell showed: a reduction bound to one term of a formula, or a
    per-row quantity never reduced."""
    spec = ctx.spec
    if spec is None:
        return []
    execution = ctx.execution
    if ctx.statistic in REDUCING and spec.one_number is not None:
        key = "per_row_series_share" if ctx.statistic == "share" else "per_row_series"
        for text in (execution.stdout, execution.result or ""):
            series = _per_row(text)
            if series is not None:
                note = render(observation_notes()[key], length=series.length)
                note += _rewrite(ctx.code)
                return _doubt("per_row_series", note, "question", "execution")
        return []
    numbers = [f.label for f in spec.fields if f.kind in ("number", "count") and f.label]
    if spec.template is None or not numbers:
        return []
    shown = [execution.stdout] + [str(d.data.get("text/plain", "")) for d in execution.displays]
    shown = [t for t in shown if t.strip()]
    series = _per_row(shown[0]) if len(shown) == 1 else None
    if series is None:
        return []
    labels = ", ".join(f"`{label}`" for label in numbers)
    note = render(observation_notes()["per_row_series_form"], length=series.length, labels=labels)
    return _doubt("per_row_series", note + _rewrite(ctx.code), "question", "execution")


def _rewrite(code: str) -> str:
    """The cell's own formula with its reduction over the whole of it
    (`stateguard.audit.totals.bound_reduction`), as a second sentence; "" if none."""
    found = totals.bound_reduction(code)
    if found is None:
        return ""
    note = observation_notes()["per_row_rewrite"]
    return " " + render(note, reducer=found.reducer, written=found.written, rewrite=found.rewrite)


@CHECKS.check(basis=("code", "question", "execution"))
def scaled_flat_amount(ctx: CellContext) -> list[Finding]:
    """The cell multiplies a flat amount the task states by a per-row quantity
    (`stateguard.audit.flat`): a flat amount is charged once per row it applies to. A
    quantity of columns holding only 0 and 1 is a condition, and is left alone."""
    amounts = {a.value: a for c in ctx.contexts for a in flat_amounts(c)}
    found = flat.scaled_amounts(ctx.code, amounts)
    if not found:
        return []
    pairs = list(dict.fromkeys(p for f in found for p in f.columns))
    held = probe_json(ctx.probe, namespace.call("flag_columns", [list(p) for p in pairs]), 10)
    rows = held if isinstance(held, list) else []
    flags = {(str(r[0]), str(r[1])) for r in rows if isinstance(r, list) and len(r) == 2}
    found = [f for f in found if not all(c in flags for c in f.columns)]
    if not found:
        return []
    first = found[0]
    amount = amounts[first.amount]
    frames = {frame for frame, _ in first.columns}
    # the rows the amount applies to: the one table the quantity reads, by its name
    rows = frames.pop() if len(frames) == 1 else ""
    note = render(
        observation_notes()["scaled_flat_amount"],
        count=f"len({rows})" if rows.isidentifier() else "len(rows)",
        line=first.line,
        expression=first.expression,
        amount=amount.text,
        term=amount.term,
        sentence=amount.sentence,
    )
    again = _once_per_row_output(ctx, first)
    if again is None:
        return _doubt("scaled_flat_amount", note, "code", "question")
    note += "\n" + render(
        observation_notes()["scaled_flat_amount_again"],
        expression=first.expression,
        amount=amount.text,
        output=again,
    )
    # what the probe showed was computed by the session: an answer may rest on it
    return [
        Finding(
            check="scaled_flat_amount",
            severity="doubt",
            message=note,
            basis=("code", "question", "execution"),
            facts={SHOWN_AGAIN: again},
        )
    ]


SHOWN_AGAIN = "shown_again"
"""The fact of a finding holding what a probe showed of the cell read the other way (the
worker counts it as shown: an answer may rest on it)."""


_AGAIN_CHARS = 300
"""The most of a probe's output a note quotes."""


def _once_per_row_output(ctx: CellContext, found: flat.ScaledAmount) -> str | None:
    """What the cell shows with the flat amount charged once per row (`flat.once_per_row`,
    run in a probe), when that differs from what it showed; None otherwise (or when the
    cell cannot be run again alike, or the probe fails: a probe never fails the step)."""
    again = flat.once_per_row(ctx.code, found)
    if again is None:
        return None
    try:
        result = ctx.probe(again, timeout=10)
    except Exception:
        return None
    if not result.ok:
        return None
    shown = (result.stdout or "").strip() or (result.result or "").strip()
    before = (ctx.execution.stdout or "").strip() or (ctx.execution.result or "").strip()
    if not shown or shown == before:
        return None
    return shown if len(shown) <= _AGAIN_CHARS else shown[:_AGAIN_CHARS] + " …"


@CHECKS.check(basis=("code",))
def multiplied_totals(ctx: CellContext) -> list[Finding]:
    """The cell multiplies the totals of two columns of one table
    (`stateguard.audit.totals`), where the total of their per-row product is meant."""
    found = totals.multiplied_totals(ctx.code)
    if not found:
        return []
    first = found[0]
    note = render(
        observation_notes()["multiplied_totals"],
        lines="; ".join(f.describe() for f in found[:2]),
        table=first.table,
        left=repr(first.left),
        right=repr(first.right),
    )
    return _doubt("multiplied_totals", note, "code")


_PICKED_FROM = 3
"""A Series of fewer values is always in order: picking an end is picking an extreme."""


@CHECKS.check(basis=("code", "execution"))
def first_element(ctx: CellContext) -> list[Finding]:
    """The cell shows the first or last element of a Series (`stateguard.audit.picks`)
    that holds at least `_PICKED_FROM` values in no order (asked of the kernel): one
    row's value, neither a reduction of the rows nor an extreme."""
    found = picks.shown_picks(ctx.code)
    if not found:
        return []
    held = probe_json(ctx.probe, namespace.call("series_order", [p.name for p in found]), 10)
    if not isinstance(held, dict):
        return []
    lines = []
    for pick in found:
        length, ordered = (held.get(pick.name) or [0, True])[:2]
        if isinstance(length, int) and length >= _PICKED_FROM and ordered is False:
            end = "first" if pick.position == 0 else "last"
            lines.append(f"`{pick.expression}` is the {end} of {length} values of `{pick.name}`")
    if not lines:
        return []
    note = render(observation_notes()["first_element"], picks="; ".join(lines[:2]))
    return _doubt("first_element", note, "code", "execution")


_OVER_ROWS = {"sum": "total", "mean": "mean", "median": "median", "count": "count"}
"""The statistics (`QuestionSpec.statistic`) of one figure over all the rows, as the note
names them."""


def _extreme_word(extreme: str) -> str:
    return "largest" if extreme in ("max", "idxmax", "nlargest") else "smallest"


@CHECKS.check(basis=("code", "question"))
def extreme_of_groups(ctx: CellContext) -> list[Finding]:
    """The cell shows the largest (or smallest) of a grouping's figures
    (`stateguard.audit.extremes`) while the question asks for one number that is a
    statistic over the rows (`_OVER_ROWS`) and names no extreme and nothing per thing
    (`aggregate_words`): one group's figure where the figure over all the rows was
    meant. A question whose statistic is not stated, or that names several, is left
    alone."""
    spec = ctx.spec
    if spec is None or spec.one_number is None or ctx.statistic not in _OVER_ROWS:
        return []
    found = extremes.group_extreme(ctx.code)
    if found is None:
        return []
    words = aggregate_words(ctx.question)
    if words.most or words.least or words.per_thing:
        return []
    notes = observation_notes()
    note = render(
        notes["extreme_of_groups"],
        expression=found.expression,
        which=_extreme_word(found.extreme),
        key=found.key,
        statistic=_OVER_ROWS[ctx.statistic],
    )
    if found.rewrite is not None:
        note += " " + render(notes["extreme_of_groups_rewrite"], rewrite=found.rewrite)
    return _doubt("extreme_of_groups", note, "code", "question")


@CHECKS.check(basis=("code", "question"))
def mean_of_ratios(ctx: CellContext) -> list[Finding]:
    """The cell shows the mean of a per-row ratio (`stateguard.audit.ratios`) while the
    question asks for one share (`QuestionSpec.statistic`, which names no mean then):
    every row weighs the same in that mean, whatever its amounts, and the share is the
    ratio of the totals."""
    spec = ctx.spec
    if spec is None or spec.one_number is None or ctx.statistic != "share":
        return []
    found = ratios.mean_of_ratios(ctx.code)
    if found is None:
        return []
    note = render(
        observation_notes()["mean_of_ratios"], expression=found.expression, rewrite=found.rewrite
    )
    return _doubt("mean_of_ratios", note, "code", "question")


_DAY = re.compile(
    r"""^\s*(?:Timestamp\()?['"]?((\d{4})-(\d{2})-(\d{2}))(?:[ T]00:00:00)?['"]?\)?\s*$"""
)
"""One day shown on its own: ``'2025-06-11'``, ``Timestamp('2025-06-11 00:00:00')``."""


@CHECKS.check(basis=("code", "question", "execution"))
def day_for_month(ctx: CellContext) -> list[Finding]:
    """The question asks for one month (``YYYY-MM``), and the cell shows, on its own, the
    label of a grouping's extreme (``t.groupby('date')['kg'].sum().idxmax()``, `
    stateguard.audit.extremes`) that is a day other than a month's first (a month kept as
    its first day is a month): the rows were grouped by day, and the day with the largest
    total need not fall in the month with the largest total."""
    spec = ctx.spec
    if spec is None or spec.template is not None or len(spec.fields) != 1:
        return []
    if spec.fields[0].kind != "month":
        return []
    found = extremes.group_extreme(ctx.code)
    if found is None or not found.extreme.startswith("idx") or found.key_column is None:
        return []
    shown = [t for t in (ctx.execution.result or "", ctx.execution.stdout) if t.strip()]
    day = _DAY.match(shown[0]) if len(shown) == 1 else None
    if day is None or day.group(4) == "01":
        return []
    column = f"[{found.column}]" if found.column is not None else ""
    example = (
        f"{found.table}.groupby(pd.to_datetime({found.table}[{found.key_column!r}])"
        f".dt.to_period('M')){column}.{found.reducer}().{found.extreme}()"
    )
    note = render(
        observation_notes()["day_for_month"],
        day=day.group(1),
        key=found.key,
        which=_extreme_word(found.extreme),
        example=example,
    )
    return _doubt("day_for_month", note, "code", "question", "execution")


_WRITERS = frozenset({"print"})
"""The only calls a cell of written numbers may make."""


def literal_numbers(code: str) -> list[str]:
    """The numbers ``code`` writes when it computes nothing and shows something: every
    statement is an expression or a plain-name assignment made of literals (numbers,
    strings, tuples, lists, dicts, f-strings of those, a unary minus), names it bound so,
    and ``print`` calls, and one is an expression; [] for any other code (arithmetic, a
    name the cell did not bind, an attribute, a subscript, an import), for assignments
    alone, and for code that writes no number."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    bound: set[str] = set()
    numbers: list[str] = []

    def literal(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, int | float) and not isinstance(node.value, bool):
                numbers.append(repr(node.value))
            return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return isinstance(node.operand, ast.Constant) and literal(node.operand)
        if isinstance(node, ast.Name):
            return node.id in bound
        if isinstance(node, ast.Tuple | ast.List):
            return all(literal(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is not None and literal(k) for k in node.keys) and all(
                literal(v) for v in node.values
            )
        if isinstance(node, ast.JoinedStr):
            return all(literal(v) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return node.format_spec is None and literal(node.value)
        if isinstance(node, ast.Call):
            return (
                isinstance(node.func, ast.Name)
                and node.func.id in _WRITERS
                and node.func.id not in bound
                and all(literal(a) for a in node.args)
                and all(literal(k.value) for k in node.keywords)
            )
        return False

    shows = False
    for statement in tree.body:
        if isinstance(statement, ast.Expr):
            if not literal(statement.value):
                return []
            shows = True
        elif isinstance(statement, ast.Assign) and all(
            isinstance(t, ast.Name) for t in statement.targets
        ):
            if not literal(statement.value):
                return []
            bound.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        else:
            return []
    return list(dict.fromkeys(numbers)) if shows else []


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
    tables: Mapping[str, str] | None = None,
    columns_before: Mapping[str, Sequence[str]] | None = None,
    statistic: str | None = None,
    seen: Sequence[str] = (),
    reads: Sequence[str] = (),
    contexts: Sequence[str] = (),
) -> list[Finding]:
    """The doubts about a cell that ran (none for a cell that failed); ``created``: the
    versions it wrote, ``question``: the turn's opener (question with its context),
    ``tables``: the tables loaded before the first question (name -> data file),
    ``columns_before``: the columns each of them held before the cell, ``statistic``: the
    one the question asks for, ``seen``: what the session showed before the cell,
    ``reads``: the versions it read, ``contexts``: the contexts of the turns so far."""
    if not execution.ok:
        return []
    ctx = CellContext(
        code,
        execution,
        created,
        probe,
        spec,
        scopes,
        turn,
        question,
        dict(tables or {}),
        dict(columns_before or {}),
        statistic,
        tuple(seen),
        tuple(reads),
        tuple(contexts),
    )
    return CHECKS.run(ctx)
