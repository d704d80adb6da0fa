"""Revisions applied to the task itself: parameters, formulas, directions and filters.

A revision picks one element of turn k's reference code whose turn has lineage
consequences (a later turn depends on k in the clean run) and inserts, right after
turn k, a revision turn that re-runs turn k's code with that element changed ("the
rate is now 0.2"). Turns after it are renumbered by one; their gold is recomputed by
replaying the revised reference code (`stateguard.bench.gold.run_gold`), so a later
turn that still uses the pre-revision value is wrong.

Kinds of element (found with `ast`; the comparison flips and filter drops are the
bench's own mutation sites, `stateguard.bench.mutations`):

* ``parameter`` — a numeric literal assigned to a name (``rate = 0.1``) or compared
  against (``x > 5``): an int n becomes n + 1, a float v becomes 2v;
* ``formula`` — an arithmetic operator: ``+`` ↔ ``-``, ``*`` ↔ ``/``;
* ``direction`` — an ordering comparison negated (``>`` → ``<=``) or an
  ``ascending=`` flag flipped;
* ``filter`` — a boolean-mask filter, ``.query`` filter or one condition of a
  conjunction dropped, or a category list narrowed.

Eligible turns ran cleanly. Re-running a turn's revised code after the turn models a
real revision when the turn is rerunnable (its code does not rebind a name from its own
old value) or, failing that, idempotent: a control task with the turn's code re-run
unchanged leaves every later result as it was (``apple = apple.sort_index(...)`` is;
``x = x * 2`` is not, and such a revision is filtered).
"""

from __future__ import annotations

import ast
import io
import random
import tokenize
from typing import get_args

from pydantic import BaseModel, ConfigDict

from stateguard.bench import inject
from stateguard.bench.faults import _node_info, _parse, _Source
from stateguard.bench.gold import GoldTask, PlannedFault
from stateguard.bench.mutations import _drop_element_sites, _dropped_constraint_sites, _flip_sites
from stateguard.bench.observe import judge
from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.train.records import RevisionInfo, RevisionKind

REVISION_KINDS: tuple[str, ...] = get_args(RevisionKind)

_ARITH = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*")}
_ORDER = ("<", "<=", ">", ">=")
_Site = tuple[ast.AST, str, tuple[int, int, str]]


class RevisionSite(BaseModel):
    """One revisable element of a turn's reference code."""

    model_config = ConfigDict(frozen=True)

    kind: RevisionKind
    turn_id: int
    description: str
    revised_code: str
    node: dict[str, object] | None = None
    rerunnable: bool = True
    """The turn's code does not rebind a name from its own old value (see the docstring)."""


def _number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _new_number(value: int | float) -> int | float:
    if isinstance(value, int):
        return value + 1
    return round(value * 2, 10) if value else 1.0


def _parameter_sites(src: _Source, tree: ast.AST) -> list[_Site]:
    sites: list[_Site] = []
    for node in ast.walk(tree):
        lits: list[tuple[ast.AST, str]] = []
        if isinstance(node, ast.Assign) and _number(node.value) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                lits.append((node.value, target.id))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and _number(node.comparators[0]):
            lits.append((node.comparators[0], "the threshold"))
        for lit, what in lits:
            old = lit.value  # type: ignore[attr-defined]
            new = repr(_new_number(old))
            a, b = src.span(lit)
            sites.append((lit, f"{what} is now {new} (was {old!r})", (a, b, new)))
    return sites


def _formula_sites(src: _Source, tree: ast.AST) -> list[_Site]:
    sites: list[_Site] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and type(node.op) in _ARITH):
            continue
        old, new = _ARITH[type(node.op)]
        _, a = src.span(node.left)
        b, _ = src.span(node.right)
        between = src.data[a:b].decode("utf-8")
        try:
            toks = [
                t
                for t in tokenize.generate_tokens(io.StringIO(between).readline)
                if t.type == tokenize.OP and t.string == old
            ]
        except (tokenize.TokenError, SyntaxError):
            continue
        if len(toks) != 1 or toks[0].start[0] != 1:
            continue
        start = a + len(between[: toks[0].start[1]].encode("utf-8"))
        what = f"the formula `{src.text(node)}` now uses {new} instead of {old}"
        sites.append((node, what, (start, start + 1, new)))
    return sites


def _direction_sites(src: _Source, tree: ast.AST) -> list[_Site]:
    sites = [
        (n, f"the comparison now points the other way ({what})", edit)
        for n, what, edit in _flip_sites(src, tree, strings_only=False)
        if what.split(" ")[0] in _ORDER
    ]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            v = kw.value
            if kw.arg == "ascending" and isinstance(v, ast.Constant) and isinstance(v.value, bool):
                new = str(not v.value)
                a, b = src.span(v)
                sites.append((v, f"the order is now ascending={new}", (a, b, new)))
    return sites


def _filter_sites(src: _Source, tree: ast.AST) -> list[_Site]:
    drops = [
        (n, f"the filter no longer applies ({what})", edit)
        for n, what, edit in _dropped_constraint_sites(src, tree)
        if "rounding" not in what
    ]
    narrow = [
        (n, f"the category filter changes ({what})", edit)
        for n, what, edit in _drop_element_sites(src, tree)
    ]
    return drops + narrow


_FINDERS = {
    "parameter": _parameter_sites,
    "formula": _formula_sites,
    "direction": _direction_sites,
    "filter": _filter_sites,
}


def revision_sites(
    kind: str, turn: inject.TurnFacts, *, rerunnable_only: bool = True
) -> list[RevisionSite]:
    """Revisable elements of ``kind`` in one turn's reference code (in source order)."""
    if kind not in _FINDERS:
        raise ValueError(f"not a revision kind: {kind!r} (one of {', '.join(REVISION_KINDS)})")
    tree = _parse(turn.code)
    if tree is None or not turn.ok or (rerunnable_only and not turn.rerunnable):
        return []
    src = _Source(turn.code)
    out: list[RevisionSite] = []
    seen: set[str] = set()
    for node, what, (a, b, new) in sorted(_FINDERS[kind](src, tree), key=lambda s: s[2][:2]):
        code = src.splice([(a, b, new)])
        if code in seen or code == turn.code or _parse(code) is None:
            continue
        seen.add(code)
        out.append(
            RevisionSite(
                kind=kind,  # type: ignore[arg-type]
                turn_id=turn.turn_id,
                description=what,
                revised_code=code,
                node=_node_info(src, node, new),
                rerunnable=turn.rerunnable,
            )
        )
    return out


def dependents(gold: GoldTask, turn_id: int) -> tuple[int, ...]:
    """Later turns that read (directly) something turn ``turn_id`` created."""
    return tuple(t.turn_id for t in gold.turns if turn_id in t.depends_on)


def choose_revisions(
    task: BenchTask, gold: GoldTask, kind: str, *, seed: int, per_kind: int
) -> list[RevisionSite]:
    """Up to ``per_kind`` sites of ``kind`` at distinct turns with dependent later turns
    (a seeded draw; the task's stated gold must be recomputable, i.e. absent)."""
    if any(t.gold is not None for t in task.turns):
        return []
    found = [
        s
        for t in gold.turns
        if t.skipped_reason is None and dependents(gold, t.turn_id)
        for s in revision_sites(kind, t.facts, rerunnable_only=False)
    ]
    rng = random.Random(f"revision:{seed}:{task.task_id}:{kind}")
    rng.shuffle(found)
    chosen: list[RevisionSite] = []
    for s in found:
        if len(chosen) >= per_kind:
            break
        if all(s.turn_id != c.turn_id for c in chosen):
            chosen.append(s)
    return sorted(chosen, key=lambda s: s.turn_id)


def control_site(site: RevisionSite) -> RevisionSite:
    """The same turn re-run unchanged (the idempotence control of an unrerunnable turn)."""
    return site.model_copy(update={"revised_code": "", "description": "control re-run"})


def revised_task(task: BenchTask, site: RevisionSite, n: int | str) -> BenchTask:
    """``task`` with the revision turn inserted after turn ``site.turn_id``."""
    k = site.turn_id
    base = task.turns[k - 1]

    def shift(t: BenchTurn) -> BenchTurn:
        return t.model_copy(
            update={
                "turn_id": t.turn_id + 1,
                "depends_on": tuple(d + 1 if d > k else d for d in t.depends_on),
            }
        )

    revision = BenchTurn(
        turn_id=k + 1,
        question=(
            f"Revision of turn {k}: {site.description}. Redo turn {k} with it, keeping "
            f"the same names.\n\nTurn {k} asked: {base.question}"
        ),
        reference_code=site.revised_code or base.reference_code,
        validator=base.validator,
        depends_on=(k,),
        tolerance=base.tolerance,
        meta={"revision_of": k, "revision_kind": site.kind},
    )
    turns = (*task.turns[:k], revision, *(shift(t) for t in task.turns[k:]))
    return task.model_copy(
        update={"task_id": f"{task.task_id}~rev-{site.kind}-{n}", "turns": turns}
    )


def revision_effect(
    task: BenchTask, gold: GoldTask, revised: BenchTask, rgold: GoldTask, k: int
) -> tuple[int, ...]:
    """Turns after the revision (revised numbering) whose recomputed gold differs from
    the original gold (judged as the bench judges a submission)."""
    changed: list[int] = []
    for orig in task.turns[k:]:
        t = orig.turn_id
        before, after = gold.turn(t), rgold.turn(t + 1)
        if before.skipped_reason or after.skipped_reason:
            continue
        j = judge(task, orig, before.observation, after.observation, kernel_checks=False)
        if not j.correct:
            changed.append(t + 1)
    return tuple(changed)


def revision_info(site: RevisionSite, effect: tuple[int, ...], revised: BenchTask) -> RevisionInfo:
    """The record of an applied revision."""
    return RevisionInfo(
        revised_task_id=revised.task_id,
        kind=site.kind,
        turn_id=site.turn_id,
        revision_turn=site.turn_id + 1,
        description=site.description,
        revised_code=site.revised_code,
        node=site.node,
        effect_turns=effect,
    )


def task_of(task: BenchTask, info: RevisionInfo) -> BenchTask:
    """The revised task a recorded revision was applied as (to replay its branches)."""
    site = RevisionSite(
        kind=info.kind,
        turn_id=info.turn_id,
        description=info.description,
        revised_code=info.revised_code,
        node=info.node,
    )
    revised = revised_task(task, site, 0)
    return revised.model_copy(update={"task_id": info.revised_task_id or revised.task_id})


def stale_after_revision(
    revised: BenchTask, rgold: GoldTask, revision_turn: int, *, seed: int, max_faults: int
) -> list[PlannedFault]:
    """Stale-reuse faults of the revised task that read a pre-revision value of what the
    revision turn rebound (at distinct later turns, a seeded choice)."""
    facts = [t.facts for t in rgold.turns]
    found = [
        c
        for c in inject.stale_candidates(facts, rgold.versions, set(rgold.names))
        if c.revision_turn == revision_turn and c.turn_id > revision_turn
    ]
    chosen = inject.choose(found, {}, seed, revised.task_id, max_faults)
    return [PlannedFault(candidate=c) for c in chosen]
