"""Counterfactual fault injection into replayed reference trajectories.

Everything here is pure: it reads facts about the clean reference run (from lineage,
see `TurnFacts`) and reference code, and returns `Candidate` faults. The replay
worker (`stateguard.bench.replay`) dry-runs candidates on the clean state, picks
some with `choose`, and plants them.

Kinds (a candidate's ``faulty_code`` replaces the turn's reference code):

* ``stale-reuse`` — the turn uses the pre-revision version of a variable. A turn j
  reads ``x@vB`` (clean lineage), ``x@vB`` was created at turn i < j, and ``x`` had an
  earlier version ``x@vA`` created before turn i. The faulty worker keeps a copy of
  the pre-revision value (``x_orig = copy.deepcopy(x)``, a real, tracked step at the
  end of turn i - 1) and at turn j runs the reference code with every load of ``x``
  replaced by ``x_orig``. Lineage sees exactly what an agent that reuses an old
  result does: turn j reads a version derived from a superseded one. "Via a derived
  variable" is the same rule applied to the derived name (it has its own versions).
* ``dropped-constraint`` — a rounding or filtering requirement is omitted: a
  ``round(x, n)`` / ``x.round(n)`` becomes ``x``, a boolean-mask selection
  ``df[mask]`` becomes ``df``, one side of ``mask_a & mask_b`` is dropped,
  ``df.query(...)`` becomes ``df``.
* ``flipped-comparison`` — one of ``< <= > >= == !=`` is negated.
* ``scope-change`` — a category filter is widened or narrowed: ``== 'x'`` ↔ ``!= 'x'``,
  or one element is dropped from an ``isin([...])`` / ``in [...]`` list.
* ``join-fault`` — one merge call (``pd.merge`` / ``df.merge``) is made silently wrong
  (`stateguard.audit.joinfaults`): its key is dropped (``how='cross'``), its
  ``how='left'|'right'|'outer'`` is dropped so pandas' default inner join applies, the
  right key is rewritten as padded text (a dtype/format change; a numeric key then
  makes pandas raise), or one right row is inserted twice (a duplicated key). Only
  turns that merge get candidates.

The AST kinds live in `stateguard.bench.mutations`. Turns eligible for injection
(turn 2 on) ran without error in the clean run and are *rerunnable*: their
reference code changes no variable that existed before the turn (no in-place
change, no rebinding of a name from its own old value), so the obedient worker's
re-run after a repair hint models a correct redo. A join fault may also go into a
turn that is not rerunnable: the replay restores what the turn rebinds
(`Candidate.restore`) before the redo. Code edits are splices of the original source
(comments and layout are kept).
"""

from __future__ import annotations

import ast
import random
from collections.abc import Sequence

from stateguard.bench.faults import (
    Candidate,
    TurnFacts,
    VersionFact,
    _parse,
    _Source,
)
from stateguard.bench.mutations import ast_candidates
from stateguard.types import VarKey

__all__ = [
    "Candidate",
    "TurnFacts",
    "VersionFact",
    "alias_for",
    "candidates",
    "choose",
    "snapshot_code",
    "stale_candidates",
    "substitute_name",
]


def _binds(node: ast.AST, name: str) -> bool:
    """Whether a function, lambda or comprehension rebinds ``name`` locally."""
    if isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        return any(p is not None and p.arg == name for p in params)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        return any(
            isinstance(n, ast.Name) and n.id == name
            for g in node.generators
            for n in ast.walk(g.target)
        )
    return False


def _scoped(tree: ast.AST, name: str) -> list[ast.Name]:
    """Every ``Name`` node of global ``name`` (not inside a scope that rebinds it locally)."""
    found: list[ast.Name] = []

    def visit(node: ast.AST) -> None:
        if _binds(node, name):
            return
        if isinstance(node, ast.Name) and node.id == name:
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def substitute_name(code: str, name: str, alias: str) -> str | None:
    """``code`` with every global load of ``name`` replaced by ``alias``; None if none/unsafe."""
    tree = _parse(code)
    if tree is None:
        return None
    names = _scoped(tree, name)
    if any(not isinstance(n.ctx, ast.Load) for n in names):
        return None  # the code rebinds or deletes it: not a pure use
    loads = names
    if not loads:
        return None
    src = _Source(code)
    return src.splice((*src.span(n), alias) for n in loads)


def alias_for(name: str, taken: set[str]) -> str:
    """A fresh name for the pre-revision copy of ``name``."""
    alias = f"{name}_orig"
    n = 2
    while alias in taken:
        alias = f"{name}_orig{n}"
        n += 1
    return alias


def snapshot_code(name: str, alias: str) -> str:
    """The faulty worker's step that keeps a copy of the pre-revision value."""
    return f"import copy\n{alias} = copy.deepcopy({name})"


def stale_candidates(
    turns: Sequence[TurnFacts], versions: dict[str, VersionFact], taken: set[str]
) -> list[Candidate]:
    """Stale-reuse candidates of a task (see the module docstring)."""
    out: list[Candidate] = []
    by_name: dict[str, list[VersionFact]] = {}
    # creation order; a variable's list holds the versions of its parts too
    for v in sorted(versions.values(), key=lambda v: (v.turn, v.version)):
        by_name.setdefault(v.name, []).append(v)
    for t in turns:
        if not (t.ok and t.rerunnable):
            continue
        written = {VarKey.name_of(k) for k in t.created}
        written |= {versions[k].name for k in t.created if k in versions}
        seen: set[str] = set()
        for key in t.reads:
            read = versions.get(key)
            if read is None or read.name in written or read.name in seen:
                continue
            i = read.turn
            earlier = [v for v in by_name[read.name] if v.turn < i]
            if not (1 <= i < t.turn_id) or not earlier:
                continue  # (another part of the same variable may still qualify)
            seen.add(read.name)
            alias = alias_for(read.name, taken)
            faulty = substitute_name(t.code, read.name, alias)
            if faulty is None:
                continue
            whole = [v for v in earlier if VarKey.name_of(v.key) == read.name]
            pre = (whole or earlier)[-1]
            out.append(
                Candidate(
                    kind="stale-reuse",
                    turn_id=t.turn_id,
                    faulty_code=faulty,
                    description=f"uses {pre.key} (before turn {i} revised it) instead of {key}",
                    variable=read.name,
                    alias=alias,
                    read_version=key,
                    pre_version=pre.key,
                    revision_turn=i,
                )
            )
    return out


def candidates(
    kind: str, turns: Sequence[TurnFacts], versions: dict[str, VersionFact], taken: set[str]
) -> list[Candidate]:
    """Every candidate fault of ``kind`` in a task (turn 1 is never injected)."""
    if kind == "stale-reuse":
        found = stale_candidates(turns, versions, taken)
    else:
        found = [c for t in turns for c in ast_candidates(kind, t)]
    return [c for c in found if c.turn_id >= 2]


def choose(
    found: Sequence[Candidate],
    outcome: dict[str, str],
    seed: int,
    task_id: str,
    max_injections: int = 1,
) -> list[Candidate]:
    """Pick up to ``max_injections`` faults at distinct turns, deterministically.

    ``outcome`` maps candidate idents to their dry-run result: ``"silent"`` (a wrong
    result without an error, as stale reuse is in practice), ``"crash"`` (the code
    raises) or ``"none"`` (judged result unchanged). Preference tiers: silent, then
    crash, then untested, then unchanged; within a tier, after a revision first.
    The choice within a tier is a seeded draw (seed and task id).
    """
    rng = random.Random(f"{seed}:{task_id}")
    pool = sorted(found, key=lambda c: c.ident)
    rng.shuffle(pool)
    rank = {"silent": 0, "crash": 1, None: 2, "none": 3}
    pool.sort(key=lambda c: (rank.get(outcome.get(c.ident), 2), not c.after_revision))
    chosen: list[Candidate] = []
    for c in pool:
        if len(chosen) >= max_injections:
            break
        if all(c.turn_id != x.turn_id for x in chosen):
            chosen.append(c)
    return sorted(chosen, key=lambda c: c.turn_id)
