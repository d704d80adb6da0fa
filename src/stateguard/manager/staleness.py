"""Which committed states are stale, from lineage: recorded as marks at each commit.

A state is stale when one of the versions it read or produced

* was itself replaced by a covering version of its symbol or of a value holding it
  (``rate@v1`` by ``rate@v2``, ``df['net']@v1`` by ``df['net']@v2`` or by ``df@v7``),
* was derived from a version replaced that way, and not re-derived from the new one
  (lineage's `LineageGraph.why_stale`), or
* holds a part that was replaced: a whole-frame read of ``df@v3`` when a column it held
  (``df['a']``, as read somewhere, or written into it) was rewritten since.

A "part" version of a holder supersedes nothing by itself: when what a state read is out
of date only because the frame holding it gained columns, the state is not stale. (A
column rewritten without ever being read before is indistinguishable from a new one.) A
write made by the state's own steps does not make it stale either. Committed states never
change, so the marks are recorded on the state whose commit found them
(`AnalyticalState.stale_marks`).
"""

from __future__ import annotations

from collections.abc import Sequence

from stateguard.lineage import LineageGraph, StaleReason, VariableVersion
from stateguard.manager.binding import content_versions, first_superseder, holders_of
from stateguard.state import AnalyticalState, StaleMark


def _own_floor(v: VariableVersion, own: dict[str, int]) -> int | None:
    """The latest creation order at which the state itself wrote ``v``'s symbol or a holder."""
    seqs = [own[s] for s in (v.name, *holders_of(v)) if s in own]
    return max(seqs) if seqs else None


def _replaced(
    graph: LineageGraph, v: VariableVersion, key: str, own: dict[str, int], *, content: bool
) -> tuple[str, str] | None:
    """(outdated, superseded_by) when ``v`` (with ``content``: or what it stands for read
    whole, `content_versions`) was replaced by a covering write that ``key`` was not
    derived from, and not by the state itself."""
    found = (
        [v]
        if not content
        else sorted(content_versions(graph, [v.key]).values(), key=lambda c: c.seq)
    )
    for c in found:
        sup = first_superseder(graph, c, _own_floor(c, own))
        if sup is not None and sup.key != key and sup.key not in graph.ancestors(key):
            return c.key, sup.key
    return None


def _reason_replaced(
    graph: LineageGraph, key: str, reason: StaleReason | None, own: dict[str, int]
) -> tuple[str, str] | None:
    if reason is None:
        return None
    try:
        outdated = graph.version(reason.outdated)
    except KeyError:
        return None
    return _replaced(graph, outdated, key, own, content=True)


def stale_version(
    graph: LineageGraph, key: str, own: dict[str, int] | None = None, *, read: bool = True
) -> tuple[str, str] | None:
    """(outdated, superseded_by) when version ``key`` makes a state stale, else None.

    In order: the version itself replaced; lineage's reason (`LineageGraph.why_stale`)
    when what it names was replaced, or a part it held was; when the state ``read`` the
    version, a part it held replaced; the reason of one of its ancestors. ``own`` maps the
    symbols the state itself produced to the creation order of its write; those writes do
    not count.
    """
    own = own or {}
    try:
        v = graph.version(key)
    except KeyError:
        return None
    found = _replaced(graph, v, key, own, content=False)
    if found is None:
        found = _reason_replaced(graph, key, graph.why_stale(key), own)
    if found is None and read:
        found = _replaced(graph, v, key, own, content=True)
    if found is None and graph.why_stale(key) is not None:
        # the earliest outdated edge is a change of other parts only: look for one that is not
        for anc in sorted(graph.ancestors(key), key=lambda k: graph.version(k).seq):
            found = _reason_replaced(graph, key, graph.why_stale(anc), own)
            if found is not None:
                break
    return found


def state_stale_marks(
    graph: LineageGraph, state: AnalyticalState, skip: frozenset[str] = frozenset()
) -> list[StaleMark]:
    """Marks for every version of ``state`` (but those in ``skip``) that makes it stale now."""
    own: dict[str, int] = {}
    for ref in state.used_variables:
        if ref.role == "produced":
            try:
                v = graph.version(ref.key)
            except KeyError:
                continue
            own[v.name] = max(own.get(v.name, -1), v.seq)
    out: list[StaleMark] = []
    for ref in state.used_variables:
        if ref.key in skip:
            continue
        found = stale_version(graph, ref.key, own, read=ref.role != "produced")
        if found is not None:
            out.append(
                StaleMark(
                    state_id=state.id, version=ref.key, outdated=found[0], superseded_by=found[1]
                )
            )
    return out


def new_stale_marks(
    graph: LineageGraph, committed: Sequence[AnalyticalState]
) -> tuple[StaleMark, ...]:
    """Marks on committed states (recorded with roles) that no earlier commit recorded."""
    known: dict[str, set[str]] = {}
    for st in committed:
        for m in st.stale_marks:
            known.setdefault(m.state_id, set()).add(m.version)
    out: list[StaleMark] = []
    for st in committed:
        if not st.records_roles and st.used_variables:
            continue  # recorded without roles: the name rule of the store applies
        out += state_stale_marks(graph, st, frozenset(known.get(st.id, ())))
    return tuple(out)
