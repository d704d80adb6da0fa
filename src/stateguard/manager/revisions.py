"""A revised parameter whose old value a result still carries as a literal.

"Finance revised the COGS rate from 42% to 47%." Lineage sees a revision when the
rate is a variable that is rebound; a model that writes ``orders["cogs"] =
orders["revenue"] * 0.42`` has no variable to rebind, and every column computed from
that cell stays "current". `revisions_in` gives the revision statements of a turn's text
(a verb of change and ``from X to Y``, ``%`` or not), as
`stateguard.question.revisions` reads them; `revised_constants` then reports a
result of a later turn that reads, directly or through its lineage ancestry, a version
created *before* the revision by a statement whose code holds the old value as a literal
(``0.42`` or ``42 / 100`` for 42 %), or that was computed in this turn by code holding it.

A finding is a **doubt**: it rests on the code (the literal) and, for a value read, its
lineage, but first on reading a revision in the turn's English, which the data does not
corroborate (a sentence such as "sales moved from 10 to 20" reads like a revision too).
`stateguard.manager.revision_probe` checks it by execution (`suspects` gives each finding
with its step, revision and origin): an alarm when a replay with the new value no longer
shows the answer, dropped when the replay shows the same.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.lineage import CellRecord, LineageGraph
from stateguard.lineage.graph import VariableVersion
from stateguard.manager.evidence import names_key, statement_source
from stateguard.manager.notes import EvidenceFacts
from stateguard.question import revision_statements


class Revision(BaseModel):
    """A parameter changed from ``old`` to ``new`` as of ``turn``."""

    model_config = ConfigDict(frozen=True)

    turn: int
    old: float
    new: float
    percent: bool
    text: str
    first_cell: int
    """Cells with a lower index ran before the revision was stated."""

    def describe(self) -> str:
        """``from 42% to 47%``."""
        unit = "%" if self.percent else ""
        return f"from {self.old:g}{unit} to {self.new:g}{unit}"


def revisions_in(text: str, turn: int, first_cell: int) -> list[Revision]:
    """The revision statements of one turn's text (context and question), as of ``turn``
    and ``first_cell`` (see `stateguard.question.revision_statements`)."""
    return [
        Revision(
            turn=turn,
            old=r.old,
            new=r.new,
            percent=r.percent,
            text=r.text,
            first_cell=first_cell,
        )
        for r in revision_statements(text)
    ]


def same_number(a: float, b: float) -> bool:
    """Two numbers equal up to float rounding."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _is_number(node: ast.expr, value: float) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) in (int, float)
        and same_number(float(node.value), value)
    )


def _factors(node: ast.expr) -> list[ast.expr]:
    """The operands of a product (``rev * 42`` → rev, 42), or the node itself."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return [*_factors(node.left), *_factors(node.right)]
    return [node]


def value_literals(
    code: str,
    value: float,
    *,
    percent: bool,
    complements: bool = False,
    as_written: bool = False,
) -> list[str]:
    """The literals of ``code`` that write ``value``, as the source shows them.

    A plain value is found as a number equal to it (never 0, which code writes for other
    reasons). A percent is found as its rate (``0.42`` for 42 %) or as a product over 100
    (``42 / 100``, ``rate * 42 / 100``). ``complements`` also finds ``1 − rate`` and
    ``1 + rate`` (``0.58``, ``1.42``: a price net of, or plus, a fee); ``as_written`` also
    finds the percent as written (``42``). None when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    wanted = {value / 100} if percent else {value}
    if percent and complements:
        wanted |= {1 - value / 100, 1 + value / 100}
    if percent and as_written:
        wanted.add(value)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            number = float(node.value)
            if any(same_number(number, w) for w in wanted) and (percent or number != 0):
                found.append(ast.unparse(node))
        elif (
            percent
            and isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and isinstance(node.right, ast.Constant)
            and node.right.value == 100
            and any(_is_number(x, value) for x in _factors(node.left))
        ):
            found.append(ast.unparse(node))
    return list(dict.fromkeys(found))


def old_literals(code: str, revision: Revision) -> list[str]:
    """The literals of ``code`` that write the revision's old value (as the source shows)."""
    return value_literals(code, revision.old, percent=revision.percent)


def cells_by_index(graph: LineageGraph) -> dict[int, CellRecord]:
    """The graph's cells by their index."""
    return {c.cell: c for c in graph.cells}


def _rewritten_since(graph: LineageGraph, name: str, revision: Revision) -> bool:
    """Whether ``name`` got a version after the revision was stated: then what still
    derives from the old one is stale by lineage (`stale_use`), not this check's case."""
    return any(v.cell >= revision.first_cell for v in graph.versions(name))


def _container(graph: LineageGraph, v: VariableVersion) -> bool:
    """A whole value whose parts have versions of their own (a DataFrame with columns)."""
    return not v.parts and bool(graph.parts_of(v.name))


def _part_as_of(graph: LineageGraph, part: str, seq: int) -> VariableVersion | None:
    """The version of ``part`` created last before ``seq``."""
    earlier = [v for v in graph.versions(part) if v.seq < seq]
    return earlier[-1] if earlier else None


class Taint:
    """Versions that carry a revision's old literal, with where it came from.

    Derivations are followed from the version a statement wrote with the literal. A
    whole table read (``orders.groupby("month")["revenue"]``, which lineage records as a
    read of all of ``orders``) passes the taint on only when the statement names a
    tainted column of it: lineage alone would taint every column of the table.
    """

    def __init__(self, graph: LineageGraph, revision: Revision) -> None:
        self.graph, self.revision = graph, revision
        self.origin: dict[str, tuple[str, list[str]]] = {}
        """version key -> (the version written with the old literal, the literals)."""
        cells = cells_by_index(graph)
        keys = {k for c in graph.cells for k in c.created}
        for v in sorted((graph.version(k) for k in keys), key=lambda v: v.seq):
            if _container(graph, v):
                continue  # a table's taint is its columns', decided where it is read
            maker = cells.get(v.cell)
            source = statement_source(maker, v.statement) if maker is not None else ""
            if v.cell < revision.first_cell:
                literals = old_literals(source, revision)
                if literals and not _rewritten_since(graph, v.name, revision):
                    self.origin[v.key] = (v.key, literals)
                    continue
            hit = self.inherited(v)
            for parent in v.parents:
                if hit is not None:
                    break
                hit = self.through(parent, source, v.seq)
            if hit is not None:
                self.origin[v.key] = hit

    def inherited(self, v: VariableVersion) -> tuple[str, list[str]] | None:
        """A column of a table made from another table as a whole (``sub = orders[mask]``,
        ``orders.copy()``): lineage first versions it when read ("derived", from its
        table); it carries what the same column of the source table carried then."""
        if v.kind != "derived" or not v.parts:
            return None
        suffix = "".join(v.parts)
        for holder_key in v.parents:
            try:
                holder = self.graph.version(holder_key)
            except KeyError:
                continue
            for source_key in holder.parents:
                try:
                    table = self.graph.version(source_key)
                except KeyError:
                    continue
                if not _container(self.graph, table):
                    continue
                then = _part_as_of(self.graph, f"{table.name}{suffix}", holder.seq)
                if then is not None and then.key in self.origin:
                    return self.origin[then.key]
        return None

    def through(self, key: str, source: str, seq: int) -> tuple[str, list[str]] | None:
        """The taint a read of ``key`` by ``source`` (at ``seq``) carries, if any."""
        if key in self.origin:
            return self.origin[key]
        try:
            read = self.graph.version(key)
        except KeyError:
            return None
        if not _container(self.graph, read):
            # a "derived" column version is made where it is first read, not by a cell
            hit = self.inherited(read)
            if hit is not None:
                self.origin[key] = hit
            return hit
        for part in self.graph.parts_of(read.name):
            then = _part_as_of(self.graph, part, seq)
            named = names_key(source, part[len(read.name) :])
            if then is not None and then.key in self.origin and named:
                return self.origin[then.key]
        return None


class Suspect(NamedTuple):
    """A `revised_constants` finding with what it is about: the step, the revision, and
    the version made with the old literal (None when the literal is in the step's own
    code)."""

    finding: Finding
    step: Step
    revision: Revision
    origin: str | None
    taint: Taint
    """The revision's taint over the graph (for the replay's chain of statements)."""


def version_key(finding: Finding) -> tuple[str, ...]:
    """What a revised-constant finding is about: the versions it names (else its message).
    Several steps may read one version; one finding per key is kept."""
    return finding.variables or (finding.message,)


def revised_constants(
    steps: Sequence[Step], graph: LineageGraph, revisions: Sequence[Revision]
) -> list[Finding]:
    """Results of the steps under review that still carry a revised parameter's old value
    (see the module docstring), one finding per version read (by its first reader)."""
    out: dict[tuple[str, ...], Finding] = {}
    for s in suspects(steps, graph, revisions):
        out.setdefault(version_key(s.finding), s.finding)
    return list(out.values())


def suspects(
    steps: Sequence[Step], graph: LineageGraph, revisions: Sequence[Revision]
) -> list[Suspect]:
    """`revised_constants`, each finding with its step, revision and origin: one per step
    and version read (`revision_probe` replays the step that shows the answer)."""
    out: list[Suspect] = []
    seen: set[tuple[int, str]] = set()
    """(step, version) pairs already made suspects."""
    own_seen: set[int] = set()
    """Cells whose own old literals already made a suspect."""
    taints: dict[int, Taint] = {}
    for step in steps:
        cell = step.cell
        if cell is None or not step.execution or not step.execution.ok:
            continue
        for revision in (r for r in revisions if r.turn <= step.turn):
            if id(revision) not in taints:
                taints[id(revision)] = Taint(graph, revision)
            taint = taints[id(revision)]
            own = old_literals(cell.source, revision) if cell.cell >= revision.first_cell else []
            if own and cell.cell not in own_seen:
                own_seen.add(cell.cell)
                finding = Finding(
                    check="revised_constant",
                    severity="doubt",
                    message=(
                        f"step {step.step} computes with {', '.join(own)}, the value "
                        f"revised {revision.describe()} in turn {revision.turn}"
                    ),
                    basis=("code", "question"),
                    facts=EvidenceFacts(step=step.step).as_facts(),
                )
                out.append(Suspect(finding, step, revision, None, taint))
            for read in cell.reads:
                if (step.step, read.version) in seen:
                    continue  # each step that read it: the replay needs the one shown
                try:
                    seq = graph.version(read.version).seq + 1
                except KeyError:
                    continue
                hit = taint.through(read.version, cell.source, seq)
                if hit is None:
                    continue
                origin, literals = hit
                seen.add((step.step, read.version))
                via = "" if origin == read.version else f", derived from {origin}"
                made = graph.version(origin).cell
                finding = Finding(
                    check="revised_constant",
                    severity="doubt",
                    message=(
                        f"step {step.step} read {read.version}{via}, computed in cell "
                        f"{made} with {', '.join(literals)}, before turn "
                        f"{revision.turn} revised that value {revision.describe()}"
                    ),
                    basis=("code", "lineage", "question"),
                    variables=(read.version,),
                    facts=EvidenceFacts(step=step.step, outdated=origin).as_facts(),
                )
                out.append(Suspect(finding, step, revision, origin, taint))
    return out


def revised_versions(graph: LineageGraph, revisions: Sequence[Revision]) -> dict[str, str]:
    """Versions that still carry a revised parameter's old value (see the module
    docstring), each with why: ``computed in cell 2 with 0.42, before turn 5 revised it
    from 42% to 47%``. The state hint marks the states that used them as stale."""
    out: dict[str, str] = {}
    for revision in revisions:
        taint = Taint(graph, revision)
        for key, (origin, literals) in taint.origin.items():
            made = graph.version(origin).cell
            out.setdefault(
                key,
                f"computed in cell {made} with {', '.join(literals)}, before turn "
                f"{revision.turn} revised it {revision.describe()}",
            )
    return out
