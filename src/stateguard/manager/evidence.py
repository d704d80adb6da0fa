"""Deterministic checks: what execution and lineage prove without any LLM.

Each check returns `stateguard.finding.Finding` items, with the typed facts of
`stateguard.manager.notes.EvidenceFacts`; an item is concrete and localized (which
variable, which version, which write superseded it, which cell) or it is not reported.
`ambiguous` items are for the hybrid policy to hand to an LLM.

Severity and basis follow what a finding rests on:

- `stale_uses`: an alarm on lineage (a version read after its input was rewritten);
- `unsupported_claims`: an alarm on the answer against what ran (execution);
- `silent_joins`: an alarm on the code and the data (the join guard's counts); a doubt
  that also rests on the question when only the question's English made it an alarm
  (`stateguard.audit.auditor.CellAudit.alarms`, the audit's own doubt);
- `output_requirements`: a doubt on the answer and the question (the decimal places are
  read from the question's English).

The deterministic policy repairs on every finding that is not ambiguous, whatever its
severity (`stateguard.manager.policies.deterministic`).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence

from stateguard.audit.auditor import audit_cell, counts_against
from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.kernel import ExecutionResult
from stateguard.lineage import CellRecord, LineageGraph
from stateguard.lineage.graph import StaleReason
from stateguard.manager.notes import EvidenceFacts
from stateguard.numbers import dates, scan
from stateguard.question import QuestionSpec
from stateguard.types import VarKey


def stale_uses(steps: Sequence[Step], graph: LineageGraph) -> list[Finding]:
    """Reads in this turn of versions that were stale and never recomputed afterwards."""
    out: list[Finding] = []
    seen: set[str] = set()
    written_later: dict[int, set[str]] = {}
    names_after: set[str] = set()
    for i in range(len(steps) - 1, -1, -1):
        written_later[i] = set(names_after)
        cell = steps[i].cell
        if cell is not None:
            names_after |= {VarKey.name_of(k) for k in cell.created}
    for i, step in enumerate(steps):
        cell = step.cell
        if cell is None:
            continue
        # a failed step still read what its statements before the error read
        for read in cell.stale_reads:
            if read.stale is None or read.refresh or read.carried or read.version in seen:
                continue  # a carried column is a stale use where the new frame's is read
            root = graph.version(read.version).root or read.name
            if read.name in written_later[i] or root in written_later[i]:
                continue  # recomputed later in the turn (the part, or its whole value)
            if through_unnamed_column(graph, read.stale, cell.source):
                continue  # the stale column only rides along in a table the step read
            seen.add(read.version)
            why = read.stale
            out.append(
                Finding(
                    check="stale_use",
                    severity="alarm",
                    message=(
                        f"step {step.step} read {read.version}, derived from {why.outdated}; "
                        f"{VarKey.name_of(why.outdated)} was since rewritten as "
                        f"{why.superseded_by} (cell {why.superseding_cell})"
                    ),
                    basis=("lineage",),
                    variables=(read.version,),
                    facts=EvidenceFacts(
                        template="stale_read",
                        step=step.step,
                        outdated=why.outdated,
                        superseding=(why.superseded_by,),
                        superseding_cell=why.superseding_cell,
                    ).as_facts(),
                )
            )
    return out


def through_unnamed_column(graph: LineageGraph, why: StaleReason, source: str) -> bool:
    """Whether a stale derivation reaches the read only as a column riding along in a
    table read as a whole, by statements that never name that column.

    Lineage records ``orders[orders["k"] == "a"]["d"]`` as a read of all of ``orders``, so
    a column of ``orders`` derived from an outdated input makes every such read stale.
    Along the chain, where it enters a table from one of the table's columns, the
    statement that read the table must name that column, or the column must come out
    again under its own key further down (``sub["cost"]`` of ``sub = orders[mask]``);
    otherwise the read does not depend on it.
    """
    chain = why.chain
    cells = {c.cell: c for c in graph.cells}
    for i in range(len(chain) - 1):
        try:
            part, holder = graph.version(chain[i]), graph.version(chain[i + 1])
        except KeyError:
            return False
        if holder.parts or not part.parts or part.root != holder.name:
            continue  # not a column entering its table
        key = part.parts[0]
        if any(graph.version(k).parts[:1] == (key,) for k in chain[i + 2 :] if _known(graph, k)):
            continue  # the same column comes out again further down
        if i + 2 < len(chain):
            reader = graph.version(chain[i + 2])
            maker = cells.get(reader.cell)
            text = statement_source(maker, reader.statement) if maker else ""
        else:
            text = source
        if not names_key(text, key):
            return True
    return False


def _known(graph: LineageGraph, key: str) -> bool:
    try:
        graph.version(key)
    except KeyError:
        return False
    return True


def names_key(source: str, key: str) -> bool:
    """Whether ``source`` names a part key such as ``['cost']`` (as a string or attribute)."""
    m = re.match(r"^\[(['\"])(.+?)\1\]$", key)
    if m is None:
        return True  # an index or expression we cannot read: assume it is named
    name = m.group(2)
    return f"'{name}'" in source or f'"{name}"' in source or f".{name}" in source


def statement_source(cell: CellRecord, statement: int | None) -> str:
    """The source of one top-level statement of a cell (lineage numbers them in order),
    or the whole cell when the statement is unknown."""
    if statement is None:
        return cell.source
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:
        return cell.source
    return ast.unparse(body[statement]) if 0 <= statement < len(body) else cell.source


def _still_used(steps: Sequence[Step], i: int, outputs: Sequence[str]) -> bool:
    """Whether what step ``i`` made with a join is still what the turn stands on.

    A named result counts while no later step of the turn rebinds any of its names; an
    unnamed one (shown as the cell's value) while no later step succeeds with output.
    """
    later = steps[i + 1 :]
    if outputs:
        rebound = {VarKey.name_of(k) for s in later if s.cell is not None for k in s.cell.created}
        return not set(outputs) <= rebound
    return not any(
        s.execution is not None and s.execution.ok and (s.execution.result or s.execution.stdout)
        for s in later
    )


def _join_findings(step: Step, question: str | None) -> list[Finding]:
    """The join guard's findings of a step (`CellAudit.findings`), for the turn's question."""
    if step.execution is None or not step.execution.private:
        return []
    audit = audit_cell(step.execution, question)
    return [f for f in audit.findings if f.facts.get("origin") == "join_guard"]


def silent_joins(
    steps: Sequence[Step], earlier: Sequence[Step] = (), question: str | None = None
) -> list[Finding]:
    """Join-guard alarms (`stateguard.audit.joinpolicy`) on results the turn still uses.

    ``question`` is the turn's: it decides whether rows an inner join drops are an alarm.

    A finding the agent was already shown (same message, in ``steps`` or in the
    ``earlier`` steps of the turn, e.g. before a repair) is its known choice, not new
    evidence: after one repair an identical re-run is accepted.
    """
    out: list[Finding] = []
    shown = {f.message for s in earlier for f in _join_findings(s, question)}
    for i, step in enumerate(steps):
        for f in _join_findings(step, question):
            known = f.message in shown
            shown.add(f.message)
            if not counts_against(f) or known or not _still_used(steps, i, f.variables):
                continue
            made = set(step.cell.created) if step.cell is not None else set()
            line = f.facts.get("line")
            where = f" (line {line})" if line is not None else ""
            # an alarm only the question's English raised is the audit's doubt on it; the
            # policy still repairs on it, as it did on every join-guard alarm
            out.append(
                Finding(
                    check="silent_join",
                    severity=f.severity,
                    message=f"step {step.step}: {f.message}{where}",
                    basis=f.basis,
                    variables=tuple(k for k in made if VarKey.name_of(k) in f.variables),
                    facts=EvidenceFacts(step=step.step).as_facts(),
                )
            )
    return out


def numbers_in(text: str) -> list[tuple[float, int, bool]]:
    """Numbers in text as (value, decimals, is_percent) (`stateguard.numbers.scan`)."""
    return [(n.value, n.decimals, n.percent) for n in scan(text)]


def _matches(value: float, decimals: int, pct: bool, observed: Sequence[float]) -> bool:
    """Whether a stated number is an observed one, possibly rounded or as a percentage."""
    forms = [(value, decimals), (value / 100, decimals + 2)]
    if not pct:
        forms.append((value * 100, max(decimals - 2, 0)))
    return any(
        math.isclose(c, o, rel_tol=1e-6, abs_tol=1e-12)
        or abs(round(o, d) - c) <= 1e-9 * max(1.0, abs(c))
        for c, d in forms
        for o in observed
    )


def _as_written(answer: str, question: str) -> list[tuple[str, list[tuple[float, int, bool]]]]:
    """The answer's numbers, less those the question writes, as written: each number by
    itself, and an ISO month or date (``2025-01``) as one value made of its numbers. A
    date is shown when all of its numbers are; it is only named whole."""
    asked = {v for v, _, _ in numbers_in(question)}
    spans = dates(answer)
    out: list[tuple[str, list[tuple[float, int, bool]]]] = []
    for n in scan(answer):
        if n.value in asked:
            continue
        claim = (n.value, n.decimals, n.percent)
        date = next((d for d in spans if d.start <= n.start < d.end), None)
        if date is None:
            out.append((f"{n.value:g}", [claim]))
        elif out and out[-1][0] == date.text:
            out[-1][1].append(claim)
        else:
            out.append((date.text, [claim]))
    return out


def _claimed(answer: str, question: str) -> list[tuple[float, int, bool]]:
    """The answer's numbers, less those the question writes (`_as_written`, flat)."""
    return [claim for _, parts in _as_written(answer, question) for claim in parts]


def _shown_numbers(ex: ExecutionResult) -> list[float]:
    """The numbers an execution printed, returned or displayed."""
    text = "\n".join(
        [ex.stdout, ex.result or ""] + [str(d.data.get("text/plain", "")) for d in ex.displays]
    )
    return [v for v, _, _ in numbers_in(text)]


def answer_numbers_shown(answer: str, question: str, before: str, after: str) -> list[str]:
    """The answer's numbers (less those the question writes) that ``before`` shows and
    ``after`` does not, possibly rounded or as a percentage, as the answer writes them."""
    seen_before = [v for v, _, _ in numbers_in(before)]
    seen_after = [v for v, _, _ in numbers_in(after)]
    return [
        f"{v:.{d}f}" + ("%" if p else "")
        for v, d, p in _claimed(answer, question)
        if _matches(v, d, p, seen_before) and not _matches(v, d, p, seen_after)
    ]


def unsupported_claims(
    steps: Sequence[Step], answer: str, question: str, *, grounds: Sequence[Step] = ()
) -> list[Finding]:
    """Numbers in the answer that no successful execution of this turn produced.

    ``steps`` are the attempt under review; ``grounds`` (default: the same steps) are every
    step whose output the answer may rest on. The manager passes the whole turn: a value an
    attempt printed before a repair was printed in this turn, and the agent saw it (an
    answer that merely repeats a refused one is `refused_again`'s case)."""
    seen = [*grounds, *(s for s in steps if s not in grounds)] if grounds else steps
    ok_outputs = [s.execution for s in seen if s.execution is not None and s.execution.ok]
    claimed = _as_written(answer, question)
    if not claimed:
        return []
    if not ok_outputs:
        return [
            Finding(
                check="unsupported_claim",
                severity="alarm",
                message="the answer states results but no code ran successfully in this turn",
                basis=("answer", "execution"),
                facts=EvidenceFacts(template="no_successful_code").as_facts(),
            )
        ]
    observed = [v for ex in ok_outputs for v in _shown_numbers(ex)]
    missing = [text for text, parts in claimed if not all(_matches(*p, observed) for p in parts)]
    if not missing:
        return []
    shown = ", ".join(missing[:5])
    return [
        Finding(
            check="unsupported_claim",
            severity="alarm",
            message=(
                f"the answer states {shown}, which no successful execution in this turn printed"
            ),
            basis=("answer", "execution"),
            facts=EvidenceFacts(
                template="not_printed",
                numbers=tuple(missing[:5]),
                # reformatted or derived-by-hand numbers are possible: let a judge look if
                # one exists
                ambiguous=True,
            ).as_facts(),
        )
    ]


def grounding_steps(steps: Sequence[Step], answer: str, question: str) -> set[int]:
    """The steps (by number) whose successful output shows a number the answer states
    (possibly rounded, or as a percentage; numbers the question writes aside): what the
    answer rests on. Empty when the answer states no such number or none is shown."""
    claimed = _claimed(answer, question)
    out: set[int] = set()
    for step in steps:
        ex = step.execution
        if not claimed or ex is None or not ex.ok:
            continue
        observed = _shown_numbers(ex)
        if any(_matches(v, d, p, observed) for v, d, p in claimed):
            out.add(step.step)
    return out


def off_answer(found: Sequence[Finding], grounds: set[int]) -> list[Finding]:
    """``found`` less the findings that a step computes with a revised value's old literal
    (no version read: the literal is in the step's own code) when that step is none of the
    ``grounds`` the answer rests on (`grounding_steps`): an exploration the answer does not
    use. A step that read what such a step made is found through lineage, with the version
    it read, and stays. Nothing is dropped when the grounds are not known (empty)."""
    if not grounds:
        return list(found)
    return [
        f
        for f in found
        if not (
            f.check == "revised_constant"
            and not f.variables
            and EvidenceFacts.of(f).step is not None
            and EvidenceFacts.of(f).step not in grounds
        )
    ]


def decimal_requirement(question: str) -> int | None:
    """A machine-checkable "N decimal places" requirement in the question, if any ("rounded
    to the nearest integer" is 0 places): `QuestionSpec.decimals`."""
    return QuestionSpec.parse(question or "").decimals


def output_requirements(question: str, answer: str) -> list[Finding]:
    """Violations of machine-checkable output requirements (decimal places)."""
    places = decimal_requirement(question)
    if places is None:
        return []
    bad = [v for v, d, _ in numbers_in(answer) if d > places and not float(v).is_integer()]
    if not bad:
        return []
    return [
        # a doubt: the places are read from the question's English; the manager still
        # asks for the stated format on it (the policies repair on it as before)
        Finding(
            check="output_requirement",
            severity="doubt",
            message=(
                (
                    "the question asks for a whole number"
                    if places == 0
                    else f"the question asks for {places} decimal place(s)"
                )
                + " but the answer gives "
                + ", ".join(f"{v:g}" for v in bad[:5])
            ),
            basis=("answer", "question"),
            facts=EvidenceFacts(
                template="decimals", places=places, numbers=tuple(f"{v:g}" for v in bad[:5])
            ).as_facts(),
        )
    ]


def refusal_key(answer: str) -> str:
    """An answer as compared with earlier refused ones (case and spacing aside)."""
    return " ".join(answer.split()).casefold()


CARRIED = frozenset({"stale_use", "revised_constant", "unsupported_claim"})
"""Checks over the steps of one attempt, whose finding a new attempt could leave behind
without touching the answer. The others see the answer again by themselves (decimal
places), or accept a choice the agent keeps once told (the join guard)."""


def same_answer(answer: str, key: str) -> bool:
    """Whether ``answer`` is the refused answer ``key`` (a `refusal_key`): the same text
    (case and spacing aside), or the same numbers in the same order in another form
    (``421`` for ``buyers: 421``; at least one number)."""
    if refusal_key(answer) == key:
        return True
    mine = [n.value for n in scan(answer)]
    return bool(mine) and mine == [n.value for n in scan(key)]


def refused_again(
    answer: str, refused: dict[str, tuple[Finding, ...]], *, settled: frozenset[str] = frozenset()
) -> list[Finding]:
    """The answer is one the manager refused earlier in this turn (`same_answer`): what
    refused it (of the `CARRIED` checks) still stands, with the severity and basis it
    had. ``settled``: checks run again over the whole turn that no longer find anything
    (a number the answer states, printed by a step after the refusal): their earlier
    findings do not stand."""
    earlier = tuple(
        f
        for key, found in refused.items()
        if same_answer(answer, key)
        for f in found
        if f.check in CARRIED and f.check not in settled
    )
    if not earlier:
        return []
    alarms = [f for f in earlier if f.severity == "alarm"]
    worst = "alarm" if alarms else "doubt"
    first = (alarms or list(earlier))[0]
    basis = tuple(dict.fromkeys(b for f in (alarms or earlier) for b in f.basis))
    return [
        Finding(
            check="refused_again",
            severity=worst,  # type: ignore[arg-type]
            message=f"the same answer was refused earlier in this turn: {first.message}",
            basis=basis,
            corroboration=next((f.corroboration for f in alarms if f.corroboration), ""),
            variables=tuple(dict.fromkeys(v for f in earlier for v in f.variables)),
            facts=EvidenceFacts().as_facts(),
        )
    ]
