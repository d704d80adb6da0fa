"""Whether a step's output depends on a revised parameter's old value: a fork probe.

`stateguard.manager.revisions` doubts a result that still carries a revised parameter's
old value as a literal ("the fuel surcharge was revised from 9% to 4%", and the profit
column was computed with ``0.09``). The doubt rests on reading a revision in the turn's
English. This module checks it by execution, on two throw-away copies of the worker's
namespace (`stateguard.kernel.probe`). Each copy re-runs the statements that carried the
old value from where it was written down to the step, then the step's own cell: once as
written, once with the old literal replaced by the new value. The replay is the same in
both copies but for the literal, so a difference between them is the literal's doing.

- The two outputs differ, and a number of the answer that the first shows, the second
  no longer does: the data show that the answer depends on the old value. The doubt
  becomes an **alarm**, and its corroboration says so.
- The two outputs are the same: the old value does not reach what the step shows. The
  finding is dropped.
- Anything else (a probe that fails or times out, an output that differs where the
  answer's numbers are not): it stays a **doubt**, as before.

The turn may mean the old value, and then the finding stays a doubt, probe or not:
- when the question writes the old value ("than under the original 10 % fee");
- when the step also uses a value computed with the new one, a comparison of the two (its
  own code holds the new literal, or it reads what a statement holding it made after the
  revision).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.kernel import ProbeResult
from stateguard.lineage import CellRecord, LineageGraph
from stateguard.manager.evidence import answer_numbers_shown, names_key, statement_source
from stateguard.manager.revisions import (
    Revision,
    Suspect,
    Taint,
    cells_by_index,
    same_number,
    value_literals,
    version_key,
)
from stateguard.question import names_number

Probe = Callable[[str], ProbeResult]
Verdict = Literal["changes", "same", "unknown"]

_MARK = "\x1f--stateguard-replay--\x1f"
_WRITE_MARK = f"__import__('sys').stdout.write({_MARK!r})"
_MAX_WALK = 2000
"""Versions visited at most when looking for a use of the new value."""


class _NewValue(ast.NodeTransformer):
    """Writes the revision's new value where the code writes its old one (``0.09`` →
    ``0.04``; ``9 / 100`` → ``4 / 100``), in the forms `old_literals` finds."""

    def __init__(self, revision: Revision) -> None:
        self.revision = revision
        self.old = revision.old / 100 if revision.percent else revision.old
        self.new = revision.new / 100 if revision.percent else revision.new
        self.changed = 0

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        number = type(node.value) in (int, float) and (self.revision.percent or node.value != 0)
        if number and same_number(float(node.value), self.old):
            self.changed += 1
            return ast.copy_location(_constant(self.new, node), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        if (
            self.revision.percent
            and isinstance(node.op, ast.Div)
            and isinstance(node.right, ast.Constant)
            and node.right.value == 100
        ):
            node.left = _replace_factor(node.left, self.revision.old, self.revision.new, self)
            return node
        return self.generic_visit(node)


def _constant(value: float, like: ast.Constant) -> ast.Constant:
    """``value`` as a literal, whole when it is and the literal it replaces was."""
    whole = isinstance(like.value, int) and float(value).is_integer()
    return ast.Constant(int(value) if whole else value)


def _replace_factor(node: ast.expr, old: float, new: float, counter: _NewValue) -> ast.expr:
    """``rate * 9`` → ``rate * 4`` (the percent as written, in a product over 100)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        node.left = _replace_factor(node.left, old, new, counter)
        node.right = _replace_factor(node.right, old, new, counter)
        return node
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if same_number(float(node.value), old):
            counter.changed += 1
            return ast.copy_location(_constant(new, node), node)
        return node
    return counter.visit(node)


def with_new_value(code: str, revision: Revision) -> str | None:
    """``code`` with the revision's old literal written as its new value; None when the
    code does not parse or holds no old literal."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    swap = _NewValue(revision)
    tree = swap.visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) if swap.changed else None


def _chain(graph: LineageGraph, taint: Taint, origins: set[str], before: int) -> list[str]:
    """The statements that made the versions carrying ``origins``' old literal, in cells
    before ``before``, in the order they ran (each once)."""
    cells = cells_by_index(graph)
    made = [
        graph.version(key)
        for key, (origin, _) in taint.origin.items()
        if origin in origins and graph.version(key).cell < before
    ]
    out: dict[tuple[int, int | None], str] = {}
    for v in sorted(made, key=lambda v: v.seq):
        where = (v.cell, v.statement)
        if where not in out and v.cell in cells:
            out[where] = statement_source(cells[v.cell], v.statement)
    return list(out.values())


def _uses_new_value(step: Step, graph: LineageGraph, revision: Revision) -> bool:
    """Whether the step computes with the revision's new value too: its own code writes
    it, or it reads, through lineage, what a statement writing it made after the
    revision."""
    cell = step.cell
    assert cell is not None
    if value_literals(cell.source, revision.new, percent=revision.percent):
        return True
    cells = cells_by_index(graph)
    todo = [r.version for r in cell.reads if names_key(cell.source, _part_key(r.name))]
    seen: set[str] = set()
    while todo and len(seen) < _MAX_WALK:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        try:
            v = graph.version(key)
        except KeyError:
            continue
        maker = cells.get(v.cell)
        source = statement_source(maker, v.statement) if maker is not None else ""
        if v.cell >= revision.first_cell and value_literals(
            source, revision.new, percent=revision.percent
        ):
            return True
        todo.extend(v.parents)
    return False


def _part_key(name: str) -> str:
    """``['fee']`` of ``df['fee']``; empty (any read) for a whole name."""
    at = name.find("[")
    return name[at:] if at > 0 else ""


def _shown(result: ProbeResult) -> str | None:
    """What the step's cell showed in a replay: its printed text after the mark and its
    value; None when the replay failed."""
    if not result.ok or _MARK not in result.stdout:
        return None
    return result.stdout.split(_MARK, 1)[1] + "\n" + (result.result or "")


def replay_verdict(
    probe: Probe, as_run: str, revised: str, answer: str, question: str
) -> tuple[Verdict, str]:
    """Run both replays and compare what the step showed (see the module docstring)."""
    before, after = _shown(probe(as_run)), _shown(probe(revised))
    if before is None or after is None:
        return "unknown", ""
    if before == after:
        return "same", ""
    lost = answer_numbers_shown(answer, question, before, after)
    if lost:
        return "changes", ", ".join(lost)
    return "unknown", ""


def corroborate(
    suspected: Sequence[Suspect],
    graph: LineageGraph,
    probe: Probe,
    answer: str,
    question: str,
) -> list[Finding]:
    """The suspects' findings after the probe: alarms where the replay with the new value
    no longer shows the answer's numbers, none where it shows the same, doubts otherwise
    (see the module docstring)."""
    out: list[Finding] = []
    groups: dict[tuple[int, int], list[Suspect]] = {}
    for s in suspected:
        groups.setdefault((s.step.step, id(s.revision)), []).append(s)
    for group in groups.values():
        out.extend(_judged(group, graph, probe, answer, question))
    # one finding per version read (several steps may read it): the most severe
    rank = {"alarm": 0, "doubt": 1, "note": 2}
    kept: dict[tuple[str, ...], Finding] = {}
    for f in sorted(out, key=lambda f: rank[f.severity]):
        kept.setdefault(version_key(f), f)
    return [f for f in out if kept.get(version_key(f)) is f]


def _judged(
    group: Sequence[Suspect], graph: LineageGraph, probe: Probe, answer: str, question: str
) -> Iterable[Finding]:
    step, revision = group[0].step, group[0].revision
    cell = step.cell
    assert cell is not None
    findings = [s.finding for s in group]
    if names_number(question, f"{revision.old:g}") or _uses_new_value(step, graph, revision):
        return findings
    replay = _replays(group, graph, cell)
    if replay is None:
        return findings
    verdict, lost = replay_verdict(probe, *replay, answer, question)
    if verdict == "same":
        return []
    if verdict == "unknown":
        return findings
    said = (
        f"a replay with {revision.new:g}{'%' if revision.percent else ''} in place of the "
        f"old value no longer shows {lost}"
    )
    return [
        f.model_copy(
            update={
                "severity": "alarm",
                "basis": (*f.basis, "execution"),
                "corroboration": said,
                "message": f"{f.message}; {said}",
            }
        )
        for f in findings
    ]


_EFFECTS = frozenset(
    {
        "to_csv",
        "to_excel",
        "to_parquet",
        "to_json",
        "to_pickle",
        "to_feather",
        "to_hdf",
        "to_sql",
        "to_stata",
        "to_orc",
        "savefig",
        "save",
        "savez",
        "savetxt",
        "dump",
        "write",
        "write_text",
        "write_bytes",
        "writelines",
        "mkdir",
        "makedirs",
        "remove",
        "unlink",
        "rename",
        "rmtree",
        "rmdir",
        "copyfile",
        "copytree",
        "move",
        "touch",
        "system",
        "Popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "exec",
    }
)
"""Calls that may act outside the namespace (files, processes): a fork keeps the
namespace apart, not the file system, so code making them is not replayed."""


def _acts_outside(code: str) -> bool:
    """Whether ``code`` calls anything that may change files or start processes (or does
    not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _EFFECTS or (name == "open" and _writes(node)):
                return True
    return False


def _writes(call: ast.Call) -> bool:
    """Whether an ``open(..)`` call may write: a mode other than a constant read mode."""
    mode = call.args[1] if len(call.args) > 1 else None
    for k in call.keywords:
        if k.arg == "mode":
            mode = k.value
    if mode is None:
        return False
    if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
        return True
    return any(c in mode.value for c in "wax+")


def _replays(
    group: Sequence[Suspect], graph: LineageGraph, cell: CellRecord
) -> tuple[str, str] | None:
    """The replay as run and with the new value, or None when no literal can be swapped
    or the code may act outside the namespace."""
    revision = group[0].revision
    origins = {s.origin for s in group if s.origin is not None}
    chain = _chain(graph, group[0].taint, origins, cell.cell) if origins else []
    own = any(s.origin is None for s in group)
    revised_chain = [with_new_value(c, revision) or c for c in chain]
    revised_cell = (with_new_value(cell.source, revision) or cell.source) if own else cell.source
    if revised_chain == chain and revised_cell == cell.source:
        return None
    if any(_acts_outside(code) for code in (*chain, cell.source)):
        return None
    as_run = "\n".join([*chain, _WRITE_MARK, cell.source])
    revised = "\n".join([*revised_chain, _WRITE_MARK, revised_cell])
    return as_run, revised
