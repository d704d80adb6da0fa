"""Deterministic bookkeeping from lineage: which versions a span of steps read and
produced, and which relations that implies to committed states.

A state records versions at the finest part lineage knows (``orders['cogs']@v2``, not the
frame holding it). What it *read* are the versions its steps read from before them; what
it *produced* are the last covering version per symbol its steps created. A "part"
version of a holder (the frame after one of its columns changed) is not produced: the
column part is. Code objects (imported modules, functions, classes) as first bound are
bookkeeping, not analysis, and are left out; a redefinition (version 2 on) is kept.

Relations (`infer_relations`), from those versions only:

* **invalidate** an earlier state when the new one produced a covering version that
  supersedes a version the earlier one read or produced: a newer version of the same
  symbol (``rate@v2`` over ``rate@v1``, ``df['net']@v2`` over ``df['net']@v1``) or a
  rebinding of a value holding it (``df@v7`` over ``df['net']@v1``). A whole-frame read
  counts as reading the columns that frame version held (`content_versions`); a frame
  produced whole does not (rewriting a loaded column supersedes what read that column,
  not the state that loaded it). Adding a column supersedes nothing.
* otherwise, to the states that produced what it read (directly, or the frame a column was
  first read from): **combine** with two or more, **progress** from the one when it is the
  latest committed state, **branch** from an older one;
* **init** when none of that applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from stateguard.checks import Step
from stateguard.lineage import LineageGraph, VariableVersion
from stateguard.state import AnalyticalState, Relation, VariableRef, VariableRole
from stateguard.types import VarKey

CODE_SUMMARIES = ("module ", "function ", "type ", "<built-in function ", "<built-in method ")
"""How lineage summarizes a module, a function, a class or a builtin bound to a name."""

NOT_PRODUCED = frozenset({"part", "derived"})
"""Version kinds a span does not produce: a holder after a part changed, and a part as its
holder had it (created when it is first read)."""


def span_versions(steps: Sequence[Step]) -> tuple[list[str], list[str]]:
    """(versions read from before the span, versions created in it — last per name).

    A read of a version the span created (earlier, or earlier in the same cell) is not
    from before it."""
    created: dict[str, str] = {}
    created_keys: set[str] = set()
    for s in steps:
        if s.cell is not None:
            for key in s.cell.created:
                created[VarKey.name_of(key)] = key
                created_keys.add(key)
    external: dict[str, None] = {}
    for s in steps:
        if s.cell is not None:
            for r in s.cell.reads:
                if r.version not in created_keys:
                    external.setdefault(r.version)
    return list(external), list(created.values())


def _version(graph: LineageGraph, key: str) -> VariableVersion | None:
    try:
        return graph.version(key)
    except KeyError:
        return None


def is_bookkeeping(v: VariableVersion) -> bool:
    """A module, function or class as first bound (``pd@v1``), or IPython's output history
    (``_``, ``_3``): not data of the analysis."""
    root = v.root or v.name
    if _OUTPUT_HISTORY.fullmatch(root):
        return True
    return v.version == 1 and v.summary.startswith(CODE_SUMMARIES)


_OUTPUT_HISTORY = re.compile(r"_+|_\d+")


def _made_from(v: VariableVersion, created: set[str]) -> bool:
    """A part as a value the span made held it (first read here)."""
    return v.kind == "derived" and created.issuperset(v.parents)


def span_record(steps: Sequence[Step], graph: LineageGraph) -> tuple[list[str], list[str]]:
    """(versions the span read from before it, versions it produced), bookkeeping dropped.

    Read: the versions its cells read that it did not create, and a whole-value read of a
    "part" version it did create when that value holds parts from before the span.
    Produced: the last version per symbol of a kind that replaces its content (a bind, an
    in-place change, a store into a part), never a "part" version of a holder.
    """
    external, _ = span_versions(steps)
    produced: dict[str, str] = {}
    created: set[str] = set()
    for s in steps:
        if s.cell is None:
            continue
        created.update(s.cell.created)
        for key in s.cell.created:
            v = _version(graph, key)
            if v is not None and v.kind not in NOT_PRODUCED:
                produced[v.name] = key
    # a whole-frame read of a "part" version the span made (a column was added in the same
    # cell) still reads the columns it holds from before the span: the last one per symbol
    holders: dict[str, str] = {}
    for s in steps:
        if s.cell is None:
            continue
        for r in s.cell.reads:
            v = _version(graph, r.version)
            if v is None or v.kind != "part" or r.version not in created:
                continue
            content = content_versions(graph, [r.version]).values()
            if any(c.key not in created and not _made_from(c, created) for c in content):
                holders[v.name] = r.version
    reads = []
    for key in [*external, *holders.values()]:
        v = _version(graph, key)
        if v is None or is_bookkeeping(v):
            continue
        if _made_from(v, created):
            continue  # a part of a value the span made, first read here
        reads.append(key)
    made = [k for k in produced.values() if not is_bookkeeping(graph.version(k))]
    return reads, made


def bind_variables(
    graph: LineageGraph,
    keys: Sequence[str],
    names: Sequence[str] = (),
    roles: dict[str, VariableRole] | None = None,
    default_role: VariableRole | None = None,
) -> tuple[VariableRef, ...]:
    """VariableRefs for version keys and for bare names (bound to their current version).

    A policy cannot invent a version: unknown names or keys are dropped. ``roles`` gives
    the role of a key; any other gets ``default_role``.
    """
    roles = roles or {}
    out: dict[str, VariableRef] = {}
    for item in [*keys, *names]:
        if VarKey.is_key(item):
            v = _version(graph, item)
            if v is None:
                continue
        else:
            found = graph.latest(item)
            if found is None:
                continue
            v = found
        role = roles.get(v.key, default_role)
        out[v.key] = VariableRef(name=v.name, version=v.version, value_summary=v.summary, role=role)
    return tuple(out.values())


def holders_of(v: VariableVersion) -> list[str]:
    """Symbols of the values holding ``v``'s symbol, outermost first."""
    root = v.root or v.name
    return [root + "".join(v.parts[:i]) for i in range(len(v.parts))]


def first_superseder(
    graph: LineageGraph, v: VariableVersion, after: int | None = None
) -> VariableVersion | None:
    """The first covering version of ``v``'s symbol, or of a value holding it, created after
    ``v`` (or after creation order ``after`` when later); None when there is none."""
    floor = v.seq if after is None else max(v.seq, after)
    found: VariableVersion | None = None
    for symbol in (v.name, *holders_of(v)):
        for w in graph.versions(symbol):
            if w.seq > floor and w.kind not in NOT_PRODUCED:
                if found is None or w.seq < found.seq:
                    found = w
                break  # versions of one symbol are in creation order
    return found


def content_versions(
    graph: LineageGraph, keys: Iterable[str], *, held: bool = True
) -> dict[str, VariableVersion]:
    """The versions ``keys`` stand for when read whole: each version itself; for a "part"
    version of a holder (a whole-frame read), the versions it was made of (the value it
    was last replaced with and the parts written since), recursively; with ``held``, for a
    value that holds parts, also the parts as it held them that were read somewhere
    ("derived" versions of it)."""
    out: dict[str, VariableVersion] = {}
    todo = list(keys)
    while todo:
        key = todo.pop()
        if key in out:
            continue
        v = _version(graph, key)
        if v is None:
            continue
        out[key] = v
        if v.kind == "part":
            todo.extend(v.parents)
        elif held and v.kind != "derived":
            for child in graph.parts_of(v.name):
                todo += [d.key for d in graph.versions(child) if d.kind == "derived"
                         and key in d.parents]  # fmt: skip
    return out


def _state_versions(state: AnalyticalState, role: VariableRole) -> list[str]:
    """Keys of a state's versions of ``role`` (a state recorded without roles: all)."""
    return [v.key for v in state.used_variables if v.role in (role, None)]


def producers(committed: Sequence[AnalyticalState]) -> dict[str, str]:
    """Version key -> the committed state that produced it (the latest, if several say so)."""
    out: dict[str, str] = {}
    for st in committed:
        for key in _state_versions(st, "produced"):
            out[key] = st.id
    return out


def sources_of(graph: LineageGraph, reads: Iterable[str], made_by: dict[str, str]) -> set[str]:
    """States that produced what ``reads`` read: the version itself, or, for a part first
    read from its holder or a whole-frame read, the versions it stands for."""
    out: set[str] = set()
    seen: set[str] = set()
    todo = list(reads)
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        if key in made_by:
            out.add(made_by[key])
            continue
        v = _version(graph, key)
        if v is not None and v.kind in NOT_PRODUCED:
            todo.extend(v.parents)
    return out


def superseded(
    graph: LineageGraph,
    produced: Iterable[str],
    earlier: Iterable[str],
    earlier_made: Iterable[str] = (),
    already: Iterable[str] = (),
) -> list[tuple[str, str]]:
    """(earlier version, the produced version superseding it) pairs: a produced covering
    version of the same symbol, or of a value holding it, created after it, unless a
    version in ``already`` (what committed states produced) had superseded it first.
    ``earlier`` were read (a whole value read stands for the parts it held),
    ``earlier_made`` produced (a value produced whole does not: a later rewrite of one of
    its columns supersedes what read that column, not what loaded the frame)."""
    already = set(already)
    newest: dict[str, VariableVersion] = {}
    for key in produced:
        v = _version(graph, key)
        if v is None or v.kind in NOT_PRODUCED:
            continue
        if v.name not in newest or newest[v.name].seq < v.seq:
            newest[v.name] = v
    out: list[tuple[str, str]] = []
    content = content_versions(graph, earlier)
    content.update(content_versions(graph, earlier_made, held=False))
    for key, old in content.items():
        for symbol in (old.name, *holders_of(old)):
            new = newest.get(symbol)
            if new is not None and new.seq > old.seq and new.key != key:
                first = first_superseder(graph, old) if already else None
                if first is None or first.key not in already:
                    out.append((key, new.key))
                break
    return out


def infer_relations(
    used: Sequence[VariableRef],
    committed: Sequence[AnalyticalState],
    graph: LineageGraph,
) -> tuple[Relation, ...]:
    """Relations of a new state (its versions ``used``, with roles) to committed ones.

    See the module docstring for the rule. Versions without a role count as both read and
    produced.
    """
    if not committed:
        return (Relation(type="init"),)
    reads = [v.key for v in used if v.role in ("read", None)]
    invalidated = proven_invalidations(used, committed, graph)
    found = sources_of(graph, reads, producers(committed))
    sources = [st.id for st in committed if st.id in found and st.id not in invalidated]
    rels = [Relation(type="invalidate", related_state_id=s) for s in invalidated]
    if len(sources) >= 2:
        rels += [Relation(type="combine", related_state_id=s) for s in sources]
    elif len(sources) == 1:
        kind = "progress" if sources[0] == committed[-1].id else "branch"
        rels.append(Relation(type=kind, related_state_id=sources[0]))
    return tuple(rels) or (Relation(type="init"),)


def proven_invalidations(
    used: Sequence[VariableRef], committed: Sequence[AnalyticalState], graph: LineageGraph
) -> list[str]:
    """Committed states whose read or produced versions ``used``'s produced ones supersede
    (a version a committed state had already superseded is not superseded again)."""
    made = [v.key for v in used if v.role in ("produced", None)]
    before = producers(committed)
    return [
        st.id
        for st in committed
        if superseded(
            graph, made, _state_versions(st, "read"), _state_versions(st, "produced"), before
        )
    ]
