"""The deterministic layer: checks that settle a step's score where the evidence is decisive.

Each rule is a check registered in `CHECKS` (`stateguard.checks`): it looks at one step
(with the trajectory around it and, when given, the live environment after it) and
returns `Finding`s. An alarm is a 0, a doubt a 0.5, a note a fact for the LLM layer. No
rule calls a model. The verdict is the lowest settled score; a step no finding settles is
left to the next layer.

Severity follows evidence (`stateguard.finding`): code, data, execution, lineage and the
answer can raise an alarm; a finding that rests on reading the question's English (its
thresholds, the columns or statistic it names, decimal places, join intent) is at most
a doubt, since a misread question must never score a correct step 0.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from functools import cached_property

from pydantic import BaseModel, ConfigDict

from stateguard.audit import audit_cell
from stateguard.audit.filterchecks import probe_json
from stateguard.audit.mapchecks import describe as describe_lost
from stateguard.audit.renamechecks import describe_one as describe_unmatched
from stateguard.checks import Basis, Check, CheckRegistry, Finding, Step, data
from stateguard.kernel import namespace
from stateguard.manager.evidence import output_requirements, unsupported_claims
from stateguard.question import threshold_spans
from stateguard.types import VarKey
from stateguard.verify.arithmetic import (
    alphabetical_extremes,
    flag_medians,
    hardcoded_ids,
    meaningless,
    numbers_as_dates,
)
from stateguard.verify.columns import (
    column_mismatch,
    dual_part_mismatch,
    frame_columns,
    projection_mismatch,
)
from stateguard.verify.consistency import (
    PART_OF_A_LIST,
    aggregate_conflicts,
    averaged_amount,
    contradicting,
    fractional_count,
    ignored_names,
    row_condition,
)
from stateguard.verify.degenerate import (
    averaged_twice,
    degenerate,
    one_sided_ranges,
    self_products,
)
from stateguard.verify.emptiness import empty_in_text, empty_values
from stateguard.verify.entities import repeated_entity
from stateguard.verify.environment import Environment
from stateguard.verify.indicators import inverted_marks
from stateguard.verify.models import VerifyTask
from stateguard.verify.readings import Reading, swap
from stateguard.verify.thresholds import counted_on_fractions, misattached_readings
from stateguard.verify.typedcompare import fixed_by_type
from stateguard.worker.answer_format import AnswerSpec

GROUNDING_ERRORS = frozenset(
    {"NameError", "UnboundLocalError", "KeyError", "AttributeError", "FileNotFoundError"}
)
"""Exceptions of exploring unknown data (a misspelled column, a name not defined yet)."""

# Words of a step that states what it found (as opposed to one that only prepares data).
_CLAIMS = (
    "found",
    "there are",
    "there is",
    "result",
    "answer",
    "shows",
    "total",
    "average",
    "mean",
    "count",
    "number of",
    "highest",
    "lowest",
    "most",
    "least",
)


class RuleInput(BaseModel):
    """What a rule sees: the task, all known steps, which one, and the environment after it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    task: VerifyTask
    steps: tuple[Step, ...]
    index: int
    env: Environment | None = None
    probe_timeout: float = 30.0

    @property
    def step(self) -> Step:
        """The step under verification."""
        return self.steps[self.index]

    @cached_property
    def frames(self) -> dict[str, list[str]]:
        """The columns of each data frame after the step (one fork probe, shared by the
        rules that need it; empty without an environment or when the probe fails)."""
        return frame_columns(self.env, self.probe_timeout) if self.env is not None else {}


CHECKS: CheckRegistry[RuleInput] = CheckRegistry("verify")
"""Every deterministic rule, in the order they run (cheapest evidence first)."""

Rule = Check[RuleInput]


def _alarm(rule: str, message: str, *basis: Basis) -> Finding:
    """A 0: evidence from code, data, execution, lineage or the answer."""
    return Finding(check=rule, severity="alarm", message=message, basis=basis)


def _note(rule: str, message: str, *basis: Basis) -> Finding:
    """A fact for the LLM layer, which decides nothing."""
    return Finding(check=rule, severity="note", message=message, basis=basis)


def _doubt(rule: str, message: str, *basis: Basis, firm: bool = False) -> Finding:
    """A 0.5; unless ``firm``, a later layer may still judge the step."""
    return Finding(check=rule, severity="doubt", message=message, basis=basis, firm=firm)


def _in_result(step: Step, rule: str, messages: Sequence[str], *basis: Basis) -> list[Finding]:
    """An alarm for each message in a result step (its value is the answer), else a doubt;
    a doubt either way when the finding rests on the question's English."""
    if step.result and "question" not in basis:
        return [_alarm(rule, m, *basis) for m in messages]
    return [_doubt(rule, m, *basis) for m in messages]


@CHECKS.check(basis=("execution",))
def execution_error(inp: RuleInput) -> list[Finding]:
    """A failed cell: a grounding error is correctable (0.5) unless never corrected; else 0."""
    ex = inp.step.execution
    if ex is None or ex.ok or ex.error is None:
        return []
    err = f"{ex.error.ename}: {ex.error.evalue}"[:300]
    if ex.status != "error" or ex.error.ename not in GROUNDING_ERRORS:
        return [_alarm("fatal_error", f"the cell failed with {err} ({ex.status})", "execution")]
    later = inp.steps[inp.index + 1 :]
    fixed = next(
        (i for i, s in enumerate(later) if s.execution is not None and s.execution.ok), None
    )
    if fixed is not None:
        where = inp.index + 1 + fixed
        return [
            _doubt("grounding_error", f"{err}; corrected by step {where}", "execution", firm=True)
        ]
    if any(s.final for s in later):
        return [_alarm("grounding_error", f"{err}; never corrected before the answer", "execution")]
    return [
        _doubt("grounding_error", f"{err}; a correctable exploration error", "execution", firm=True)
    ]


def _claims_finding(step: Step) -> bool:
    ex = step.execution
    shows = ex is not None and bool((ex.stdout or "").strip() or (ex.result or "").strip())
    thought = step.thought.lower()
    return shows or any(w in thought for w in _CLAIMS)


@CHECKS.check(basis=("execution", "data"))
def empty_result(inp: RuleInput) -> list[Finding]:
    """An empty or all-NaN result where the step states a finding → 0 (else a fact)."""
    step, ex = inp.step, inp.step.execution
    if ex is None or not ex.ok:
        return []
    found: dict[str, str] = {}
    shown = empty_in_text(ex.result or "") or empty_in_text(ex.stdout.strip())
    if shown:
        found["the shown result"] = shown
    if inp.env is not None and step.cell is not None:
        names = [VarKey.name_of(k) for k in step.cell.created]
        found.update(empty_values(inp.env, names, inp.probe_timeout))
    if not found:
        return []
    what = ", ".join(f"{k} is {'empty' if v == 'empty' else 'all NaN'}" for k, v in found.items())
    if _claims_finding(step):
        return [
            _alarm("empty_result", f"the step states a finding but {what}", "execution", "data")
        ]
    return [_note("empty_result", what, "execution", "data")]


@CHECKS.check(basis=("code", "data"))
def absent_filter(inp: RuleInput) -> list[Finding]:
    """An equality filter on a value its column does not hold (read by a fork probe of the
    environment after the step; `stateguard.checks.data`): → 0 in a step that shows a
    result, else a fact."""
    step = inp.step
    if inp.env is None or step.code is None:
        return []
    found = data.absent_filter(step.code, step.execution, inp.env.probe, timeout=inp.probe_timeout)
    if not found.facts:
        return []
    if _claims_finding(step):
        return [_alarm("absent_filter", found.note, "code", "data")]
    return [_note("absent_filter", found.note, "code", "data")]


@CHECKS.check(basis=("lineage", "data"))
def blank_column(inp: RuleInput) -> list[Finding]:
    """A column the step wrote that holds only missing values now (read by a fork probe;
    `stateguard.checks.data`): → 0 in a result step (its result is built on nothing), else
    0.5 (a column may be created empty and filled later)."""
    step, cell = inp.step, inp.step.cell
    if inp.env is None or cell is None:
        return []
    found = data.blank_column(
        cell.created,
        step.execution,
        inp.env.probe,
        reads=[r.version for r in cell.reads],
        timeout=inp.probe_timeout,
    )
    if not found.facts:
        return []
    message = "; ".join(
        f"the step wrote `{f.frame}[{f.column!r}]`, which holds only missing values in all "
        f"{f.rows} rows"
        for f in found.facts[:3]
    )
    if step.result:
        return [_alarm("blank_column", message, "lineage", "data")]
    return [_doubt("blank_column", message, "lineage", "data")]


@CHECKS.check(basis=("code", "data"))
def lost_mapping(inp: RuleInput) -> list[Finding]:
    """A column the step wrote as a ``map``/``apply`` of another that is missing where its
    source holds a value (`stateguard.checks.data`, a fork probe): what is computed from it
    leaves those rows out → 0 in a result step, else 0.5."""
    step = inp.step
    if inp.env is None or step.code is None:
        return []
    found = data.lost_mapping(step.code, step.execution, inp.env.probe, timeout=inp.probe_timeout)
    messages = [describe_lost(f) for f in found.facts]
    return _in_result(step, "lost_mapping", messages, "code", "data")


@CHECKS.check(basis=("code", "data"))
def unmatched_rename(inp: RuleInput) -> list[Finding]:
    """A ``rename(columns={...})`` key that is not a column of the table it is applied to
    (the table evaluated again in a fork probe; `stateguard.checks.data`): pandas skipped
    it, so the table holds other columns than the step assumed → 0 in a result step, else
    0.5."""
    step = inp.step
    if inp.env is None or step.code is None:
        return []
    found = data.unmatched_rename(
        step.code, step.execution, inp.env.probe, timeout=inp.probe_timeout
    )
    messages = [describe_unmatched(f) for f in found.facts]
    return _in_result(step, "unmatched_rename", messages, "code", "data")


@CHECKS.check(basis=("question", "code", "data"))
def inverted_mark(inp: RuleInput) -> list[Finding]:
    """A 0/1 column the step wrote from one column of categories that marks the group the
    question counts ("the Male percentage") with 0 and the others with 1
    (`stateguard.verify.indicators`, a fork probe) → 0.5: a mean or sum of it counts the
    other group, unless a later step takes its complement."""
    step, ex = inp.step, inp.step.execution
    if inp.env is None or step.code is None or ex is None or not ex.ok:
        return []
    found = inverted_marks(inp.env.probe, inp.task.question, step.code, inp.probe_timeout)
    return [_doubt("inverted_mark", m, "question", "code", "data") for m in found]


@CHECKS.check(basis=("question", "execution"))
def printed_series(inp: RuleInput) -> list[Finding]:
    """A whole Series printed after a label (``total: 0    33137.10 …``) while the question
    asks for one number (`stateguard.checks.data`) → 0.5: doubtful, since the step may
    print a table on purpose."""
    spec = AnswerSpec.from_question(inp.task.question)
    found = data.printed_series(inp.step.execution, spec)
    if not found.facts:
        return []
    return [_doubt("printed_series", found.note, "question", "execution")]


@CHECKS.check(basis=("lineage",))
def stale_read(inp: RuleInput) -> list[Finding]:
    """The cell read a version lineage knows is stale (and did not just recompute it) → 0."""
    cell = inp.step.cell
    if cell is None:
        return []
    return [
        _alarm("stale_read", r.stale.describe(), "lineage")
        for r in cell.stale_reads
        if r.stale is not None and not r.refresh
    ]


@CHECKS.check(basis=("code", "data", "question"))
def audit_diagnostics(inp: RuleInput) -> list[Finding]:
    """Join-guard and operator findings, as the manager weighs them: an alarm
    (`stateguard.audit.joinpolicy`: a keyless or fan-out merge, a stray duplicate key, rows
    pandas' default inner join drops; a rejecting operator rule) → 0; rows a join drops
    that only the question's English asks to keep (``how='inner'`` written), and a note
    (rows a join drops that the question did not ask to keep, a concat's guesses) → 0.5."""
    ex = inp.step.execution
    if ex is None or not ex.private:
        return []
    return [
        _alarm(f"audit_{f.check}", f.message, "code", "data")
        if f.severity == "alarm"
        else _doubt(f"audit_{f.check}", f.message, "code", "data", *_asked(f))
        for f in audit_cell(ex, inp.task.question or None).findings
    ]


@CHECKS.check(basis=("answer", "execution", "question"))
def answer_rules(inp: RuleInput) -> list[Finding]:
    """The final step without an answer → 0; a number in the answer no execution printed → 0;
    an answer against the question's stated decimal places → 0.5 (a reading of English)."""
    step = inp.step
    if step.final and step.answer is None:
        return [_alarm("no_answer", "the final step gives no answer", "answer")]
    if step.answer is None:
        return []
    before = inp.steps[: inp.index]
    return [
        _alarm("unsupported_number", e.message, "answer", "execution")
        for e in unsupported_claims(before, step.answer, inp.task.question)
    ] + [
        _doubt("output_requirement", e.message, "answer", "question")
        for e in output_requirements(inp.task.question, step.answer)
    ]


@CHECKS.check(basis=("execution", "question"))
def shown_requirements(inp: RuleInput) -> list[Finding]:
    """A shown result that breaks a machine-checkable requirement of the question (decimal
    places). The value of a result step is its answer → 0.5 (the requirement is read from
    the question's English); anything else shown is a fact, since a step may show raw
    values before the answer rounds them."""
    ex = inp.step.execution
    if ex is None or not ex.ok or inp.step.answer is not None:
        return []
    question = inp.task.question
    if inp.step.result and ex.result:
        decided = output_requirements(question, ex.result)
        if decided:
            return [
                _doubt("output_requirement", e.message, "execution", "question") for e in decided
            ]
    shown = "\n".join([ex.stdout, ex.result or ""])
    return [
        _note("output_requirement", e.message, "execution", "question")
        for e in output_requirements(question, shown)
    ]


@CHECKS.check(basis=("question", "code", "data"))
def question_contradiction(inp: RuleInput) -> list[Finding]:
    """A comparison in a cell that ran and goes against the question (asks for more than 6,
    keeps ``<= 6``; names a value, excludes it) → 0.5; in a result step also a statistic,
    extreme or sort order against it (`aggregate_contradictions`), and a mean where "how
    much" or "all the" most likely asks for a total (`averaged_amount`) → 0.5. Each rests
    on reading the question's English: a doubt, never a 0."""
    step, ex = inp.step, inp.step.execution
    if step.code is None or ex is None or not ex.ok:
        return []
    compared = _weighed(inp, "question_contradiction", contradicting(inp.task.question, step.code))
    if not step.result:  # a statistic or order only settles the result, not an exploration
        return compared
    readings: list[Reading | str] = []
    for c in aggregate_conflicts(inp.task.question, step.code):
        pair = swap(step.code, attrs=c.attrs, flip_sort=c.flip_sort)
        readings.append(Reading(c.message, *pair) if pair else c.message)
    doubt = averaged_amount(inp.task.question, step.code)
    return (
        compared
        + _results_weighed(inp, "question_contradiction", readings)
        + ([_doubt("averaged_amount", doubt, "question", "code")] if doubt else [])
    )


def _shows_stored_value(code: str | None) -> bool:
    """The cell only shows a name (``army``, ``(army)``): a stored value, unchanged."""
    try:
        body = ast.parse(code or "").body
    except SyntaxError:
        return False
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Name)


def _turn_start(steps: Sequence[Step], index: int) -> int:
    """The index of the first step of the turn of ``steps[index]``: after the last earlier
    step that closed a turn (a result or final step)."""
    for j in range(index - 1, -1, -1):
        if steps[j].result or steps[j].final:
            return j + 1
    return 0


def _written_in(steps: Sequence[Step], name: str) -> bool:
    """Whether a step of ``steps`` wrote ``name``: by lineage when recorded, else by an
    assignment or an in-place call in its code."""
    for s in steps:
        if s.cell is not None and any(VarKey.name_of(k) == name for k in s.cell.created):
            return True
        try:
            tree = ast.parse(s.code or "")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return True
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and getattr(node.func.value, "id", None) == name
                and any(k.arg == "inplace" for k in node.keywords)
            ):
                return True
    return False


@CHECKS.check(basis=("question", "code"))
def unfiltered_rows(inp: RuleInput) -> list[Finding]:
    """A result step that shows a stored table as it stood before the turn (no step of the
    turn wrote it) while the question asks for the rows that meet a condition → 0.5: the
    condition was most likely dropped."""
    step, ex = inp.step, inp.step.execution
    if not step.result or ex is None or not ex.ok or not _shows_stored_value(step.code):
        return []
    wanted = row_condition(inp.task.question)
    if wanted is None:
        return []
    name = (step.code or "").strip().strip("()").strip()
    if _written_in(inp.steps[_turn_start(inp.steps, inp.index) : inp.index], name):
        return []
    return [
        _doubt(
            "unfiltered_rows",
            f'the question asks for "{wanted}…", but the step shows `{name}` as it stood '
            "before this turn: no condition was applied",
            "question",
            "code",
        )
    ]


@CHECKS.check(basis=("question", "code", "data"))
def question_ignored(inp: RuleInput) -> list[Finding]:
    """A result or answer step whose code so far never uses a threshold, quoted value, year
    the question keeps rows to, or column or value of the data that the question names →
    0.5, with the reason: a result step showing a stored value unchanged while a threshold
    or quoted value is never applied, a list of values of one column of which the code
    uses only some, or a name never used. A reading of the question: a doubt, never a 0."""
    step = inp.step
    if not (
        step.answer is not None
        or (step.result and step.execution is not None and step.execution.ok)
    ):
        return []
    code = "\n".join(s.code for s in inp.steps[: inp.index + 1] if s.code)
    if not code.strip():
        return []
    own = [VarKey.name_of(k) for k in step.cell.created] if step.cell is not None else []
    missed = ignored_names(inp.task.question, code, inp.env, inp.probe_timeout, own)
    if not missed:
        return []
    partial = [m for m in missed if m.startswith(PART_OF_A_LIST)]
    if step.result and partial:
        return [
            _doubt(
                "question_ignored",
                f"the question lists {m[len(PART_OF_A_LIST) + 1 :]}",
                "question",
                "code",
            )
            for m in partial
        ]
    conditions = [m for m in missed if m.startswith(("the threshold", "the value '"))]
    if step.result and conditions and _shows_stored_value(step.code):
        return [
            _doubt(
                "question_ignored",
                f"the step shows `{(step.code or '').strip()}` as it is, and the question's "
                + ", ".join(conditions[:3])
                + " is applied by no code so far",
                "question",
                "code",
            )
        ]
    return [
        _doubt(
            "question_ignored",
            "the question names " + ", ".join(missed[:5]) + " but no code so far uses it",
            "question",
            "code",
            "data",
        )
    ]


@CHECKS.check(basis=("code", "question"))
def fixed_by_form(inp: RuleInput) -> list[Finding]:
    """A cell that ran and computes a value fixed by its form (``x - x``, ``a == a``, a
    column selected twice) → 0; a column multiplied by itself while the question asks for
    no square, a mean divided by a count, or two bounds on one value from one side, → 0.5
    (`stateguard.verify.degenerate`)."""
    step, ex = inp.step, inp.step.execution
    if step.code is None or ex is None or not ex.ok:
        return []
    return (
        [_alarm("fixed_by_form", m, "code") for m in degenerate(step.code)]
        + [
            _doubt("self_product", m, "code", "question")
            for m in self_products(step.code, inp.task.question)
        ]
        + [_doubt("averaged_twice", m, "code") for m in averaged_twice(step.code)]
        + [_doubt("one_sided_range", m, "code") for m in one_sided_ranges(step.code)]
    )


@CHECKS.check(basis=("question", "code", "data"))
def question_column(inp: RuleInput) -> list[Finding]:
    """A result step that takes its value from columns of a table while the question names
    other columns of that table, none of which the step reads or writes; one that reads
    some named columns and, instead of another named one, an unnamed one; one whose shown
    table leaves out a column the question asks for; a column named by its own words
    alone ("how many orders" → ``order_id``) missed, or a named column the cell builds and
    then does not show → 0.5: which column the question names is a reading of its
    English. See `stateguard.verify.columns`.

    It is an alarm (0) when one named column is missed, the step reads either no named
    column or exactly one other, unnamed column beside named ones, and a fork probe shows
    that reading the named column there changes the result."""
    step, ex = inp.step, inp.step.execution
    if not step.result or step.code is None or ex is None or not ex.ok or inp.env is None:
        return []
    frames = inp.frames
    q = inp.task.question
    found = (
        projection_mismatch(q, step.code, frames)
        or column_mismatch(q, step.code, frames)
        or dual_part_mismatch(q, step.code, frames)
    )
    if found is None:
        return []
    one_for_one = len(found.instead) == 1
    if (
        not (found.weak or found.built)
        and len(found.missed) == 1
        and (not found.partial or one_for_one)
    ):
        pair = swap(step.code, strings={c: found.missed[0] for c in found.instead})
        if pair is not None:
            return _results_weighed(inp, "question_column", [Reading(found.describe(), *pair)])
    return [_doubt("question_column", found.describe(), "question", "code", "data")]


@CHECKS.check(basis=("question", "data"))
def one_per_entity(inp: RuleInput) -> list[Finding]:
    """A result step showing a table or Series that repeats the one thing the question asks
    a value for ("the price of each item" with an item listed twice;
    `stateguard.verify.entities`, a fork probe) → 0.5: two answers for one thing, or a
    question that expects repeats after all."""
    step, ex = inp.step, inp.step.execution
    if not step.result or inp.env is None or ex is None or not ex.ok or not ex.result:
        return []
    found = repeated_entity(inp.env.probe, inp.task.question, inp.probe_timeout)
    return [] if found is None else [_doubt("one_per_entity", found, "question", "data")]


@CHECKS.check(basis=("code", "data"))
def meaningless_arithmetic(inp: RuleInput) -> list[Finding]:
    """A sum, mean or product of a text column, arithmetic on an identifier column, or
    ``to_datetime`` of a column of numbers without a unit (`stateguard.verify.arithmetic`,
    kinds read by a fork probe) → 0 in a result step, else 0.5; a median of a 0/1 column,
    or the row of the largest or smallest value of a column of words (``idxmax``:
    alphabetical), → 0.5 (either may be meant)."""
    step, ex = inp.step, inp.step.execution
    if inp.env is None or step.code is None or ex is None or not ex.ok:
        return []
    found = meaningless(inp.env.probe, step.code, inp.task.question, inp.probe_timeout)
    found += numbers_as_dates(inp.env.probe, step.code, inp.probe_timeout)
    medians = flag_medians(inp.env.probe, step.code, inp.probe_timeout)
    extremes = alphabetical_extremes(inp.env.probe, step.code, inp.probe_timeout)
    return (
        _in_result(step, "meaningless_arithmetic", found, "code", "data")
        + [_doubt("flag_median", m, "code", "data") for m in medians]
        + [_doubt("alphabetical_extreme", m, "code", "data") for m in extremes]
    )


@CHECKS.check(basis=("code", "question"))
def hardcoded_id(inp: RuleInput) -> list[Finding]:
    """A result step that keeps the rows of one identifier the question does not name
    (`stateguard.verify.arithmetic.hardcoded_ids`) → 0.5: exploring one record is fine,
    answering from it is doubtful."""
    step, ex = inp.step, inp.step.execution
    if not step.result or step.code is None or ex is None or not ex.ok:
        return []
    return [
        _doubt("hardcoded_id", m, "code", "question")
        for m in hardcoded_ids(step.code, inp.task.question)
    ]


@CHECKS.check(basis=("question", "code", "data"))
def threshold_column(inp: RuleInput) -> list[Finding]:
    """A threshold of the question compared with another column than the one the question
    attaches it to (`stateguard.verify.thresholds`) → 0.5 (a reading of the question)."""
    step, ex = inp.step, inp.step.execution
    if inp.env is None or step.code is None or ex is None or not ex.ok:
        return []
    if not threshold_spans(inp.task.question):
        return []  # no threshold in the question: spare the probe
    frames = inp.frames
    found = misattached_readings(inp.task.question, step.code, frames)
    weighed = _weighed(inp, "threshold_column", found)
    if step.result:
        return weighed
    return [f.demoted() if f.severity == "alarm" else f for f in weighed]


@CHECKS.check(basis=("question", "code", "data"))
def counted_fraction(inp: RuleInput) -> list[Finding]:
    """A threshold that counts things the code selects by name ("more than one Canned
    Soda") compared with a column holding non-whole values (``item_price > 1``;
    `stateguard.verify.thresholds.counted_on_fractions`, a fork probe) → 0.5."""
    step, ex = inp.step, inp.step.execution
    if inp.env is None or step.code is None or ex is None or not ex.ok:
        return []
    found = counted_on_fractions(inp.env.probe, inp.task.question, step.code, inp.probe_timeout)
    return [_doubt("counted_fraction", m, "question", "code", "data") for m in found]


@CHECKS.check(basis=("code", "data"))
def type_fixed_comparison(inp: RuleInput) -> list[Finding]:
    """A comparison of a text column with a number, or of a numeric column with a string
    (`stateguard.verify.typedcompare`): its outcome is the same for every row → 0 in a
    result step, else 0.5."""
    step, ex = inp.step, inp.step.execution
    if inp.env is None or step.code is None or ex is None or not ex.ok:
        return []
    found = fixed_by_type(inp.env.probe, step.code, inp.probe_timeout)
    return _in_result(step, "type_fixed_comparison", found, "code", "data")


@CHECKS.check(basis=("question", "execution"))
def count_not_whole(inp: RuleInput) -> list[Finding]:
    """A result step whose shown value is a number with a fractional part while the
    question asks how many (`consistency.fractional_count`) → 0.5."""
    step, ex = inp.step, inp.step.execution
    if not step.result or ex is None or not ex.ok or not ex.result:
        return []
    found = fractional_count(inp.task.question, ex.result)
    return [] if found is None else [_doubt("count_not_whole", found, "question", "execution")]


EXECUTION_RULES: tuple[Rule, ...] = (
    execution_error,
    stale_read,
    audit_diagnostics,
    empty_result,
    answer_rules,
    shown_requirements,
)
"""The rules that read execution, lineage and the audit only (not the question's wording),
as they were before the filter and printing checks."""

DATA_RULES: tuple[Rule, ...] = (absent_filter, printed_series, blank_column)
"""Rules that check what a step selected, printed or wrote against the data (fork probes)."""

RULES: tuple[Rule, ...] = (
    *EXECUTION_RULES,
    *DATA_RULES,
    lost_mapping,
    unmatched_rename,
    inverted_mark,
    fixed_by_form,
    meaningless_arithmetic,
    hardcoded_id,
    type_fixed_comparison,
    count_not_whole,
    question_contradiction,
    question_column,
    one_per_entity,
    threshold_column,
    counted_fraction,
    unfiltered_rows,
    question_ignored,
)
"""Every deterministic rule, cheapest evidence first."""


def _corroborated(rule: str, message: str, why: str) -> Finding:
    """An alarm on a reading of the question, with what the data showed (``why``)."""
    return Finding(
        check=rule,
        severity="alarm",
        message=f"{message} ({why})",
        basis=("question", "code", "data"),
        corroboration=why,
    )


def _weighed(inp: RuleInput, rule: str, found: Sequence[Reading]) -> list[Finding]:
    """Each comparison against the question's reading: an alarm when the data corroborates
    it, a doubt otherwise.

    The corroboration is one fork probe: the comparison as the code wrote it and as the
    question reads it, evaluated on the data after the step, keep different rows. It shows
    the reading changes the result on this data; it cannot show the English was read
    right, which is why a comparison the probe cannot evaluate as a mask over rows (a loop
    variable, a group's length, a lambda's argument, no environment) stays a doubt."""
    if not found:
        return []
    rows = None
    if inp.env is not None:
        cell = namespace.call("readings_differ", [(c.written, c.read) for c in found])
        rows = probe_json(inp.env.probe, cell, inp.probe_timeout)
    if not isinstance(rows, list) or len(rows) != len(found):
        rows = [None] * len(found)
    out = []
    for c, r in zip(found, rows, strict=True):
        if isinstance(r, list) and len(r) == 3 and all(isinstance(x, int) for x in r) and r[2]:
            why = (
                f"on the data, `{c.written}` keeps {r[0]} and `{c.read}` keeps {r[1]}: "
                f"the two readings differ on {r[2]}"
            )
            out.append(_corroborated(rule, c.message, why))
        else:
            out.append(_doubt(rule, c.message, "question", "code"))
    return out


def _results_weighed(inp: RuleInput, rule: str, readings: Sequence[Reading | str]) -> list[Finding]:
    """Each finding with its result under the question's reading (`Reading`, see
    `stateguard.verify.readings`): an alarm when a fork probe shows the two results
    differ, a doubt otherwise (and for a bare message, which has no rewrite)."""
    pairs = [r for r in readings if isinstance(r, Reading)]
    differ: object = []
    if pairs and inp.env is not None:
        cell = namespace.call("results_differ", [(r.written, r.read) for r in pairs])
        differ = probe_json(inp.env.probe, cell, inp.probe_timeout) or []
    if not isinstance(differ, list) or len(differ) != len(pairs):
        differ = [None] * len(pairs)
    verdict = {id(r): d for r, d in zip(pairs, differ, strict=True)}
    out = []
    for r in readings:
        if isinstance(r, Reading) and verdict.get(id(r)) is True:
            why = f"on the data, `{r.written}` and `{r.read}` give different results"
            out.append(_corroborated(rule, r.message, why))
        else:
            message = r.message if isinstance(r, Reading) else r
            out.append(_doubt(rule, message, "question", "code"))
    return out


def _asked(finding: Finding) -> tuple[Basis, ...]:
    """The question as a basis, when the join guard's alarm came from it (the audit's
    doubt; `stateguard.audit.auditor.CellAudit.findings`)."""
    return ("question",) if finding.severity == "doubt" and finding.from_question else ()
