"""Property tests: lifecycle invariants under random operations; graph queries on random DAGs."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from stateguard.errors import StoreError
from stateguard.state import AnalyticalState, Relation, StateStore, VariableRef

POOL = [f"S{i}" for i in range(1, 6)]
LINK_TYPES = ["progress", "branch", "invalidate", "combine"]


def _draft(sid: str, issue: str, targets: list[tuple[str, str]]) -> AnalyticalState:
    rels = tuple(Relation(type=t, related_state_id=r) for t, r in targets if r != sid)
    return AnalyticalState(id=sid, issue=issue, relations=rels or (Relation(type="init"),))


def _apply(store: StateStore, kind: str, state: AnalyticalState) -> object:
    """Run one operation; ``state`` supplies the id and the new content."""
    if kind == "save":
        return store.save_draft(state)
    if kind == "commit":
        return store.commit(state.id)
    if kind == "commit_obj":
        return store.commit(state)
    if kind == "abandon":
        return store.abandon(state.id)
    if kind == "change":
        return store.save_draft(store.get(state.id).with_changes(issue=state.issue))
    return store.next_state_id()


operations = st.lists(
    st.tuples(
        st.sampled_from(["save", "commit", "commit_obj", "abandon", "change", "next_id"]),
        st.sampled_from(POOL),
        st.sampled_from(["", "issue a", "issue b"]),
        st.lists(st.tuples(st.sampled_from(LINK_TYPES), st.sampled_from(POOL)), max_size=2),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(ops=operations)
def test_random_operations_keep_lifecycle_invariants(ops) -> None:
    status: dict[str, str] = {}  # reference model of each id's lifecycle
    drafts: dict[str, AnalyticalState] = {}
    snapshots: dict[str, str] = {}
    commits: Counter[str] = Counter()
    commit_order: list[str] = []
    issued: list[str] = []

    def committable(state: AnalyticalState) -> bool:
        return bool(state.issue.strip()) and all(
            status.get(t) == "committed" for t in state.related_ids
        )

    with StateStore(":memory:") as store:
        for kind, sid, issue, targets in ops:
            state = _draft(sid, issue, targets)
            current = status.get(sid)
            if kind == "save":
                expected = current in (None, "draft")
            elif kind == "commit":
                expected = current == "draft" and committable(drafts[sid])
            elif kind == "commit_obj":
                expected = current in (None, "draft") and committable(state)
            elif kind in ("abandon", "change"):
                expected = current == "draft"
            else:
                expected = True
            try:
                result = _apply(store, kind, state)
            except StoreError:
                ok = False
            else:
                ok = True
            assert ok == expected, (kind, sid, current)

            if ok and kind == "save":
                status[sid], drafts[sid] = "draft", state
            elif ok and kind == "change":
                drafts[sid] = drafts[sid].with_changes(issue=issue)
            elif ok and kind in ("commit", "commit_obj"):
                status[sid] = "committed"
                commits[sid] += 1
                commit_order.append(sid)
                snapshots[sid] = store.get(sid).model_dump_json()
                assert result.status == "committed"
            elif ok and kind == "abandon":
                status[sid] = "abandoned"
            elif ok and kind == "next_id":
                assert result not in issued
                assert result not in status
                issued.append(result)

            # Invariants after every operation.
            assert max(commits.values(), default=0) <= 1
            for committed_id, snapshot in snapshots.items():
                assert store.get(committed_id).model_dump_json() == snapshot
            committed_ids = [s.id for s in store.committed()]
            draft_ids = [s.id for s in store.drafts()]
            assert committed_ids == commit_order
            assert len(set(committed_ids)) == len(committed_ids)
            assert len(set(draft_ids)) == len(draft_ids)
            assert not set(committed_ids) & set(draft_ids)
            assert sorted(draft_ids) == sorted(k for k, v in status.items() if v == "draft")


@st.composite
def random_dags(draw) -> list[AnalyticalState]:
    """Committable states S1..Sn whose relations only target earlier states."""
    n = draw(st.integers(min_value=1, max_value=8))
    states = []
    for i in range(1, n + 1):
        targets = draw(st.lists(st.integers(1, i - 1), unique=True, max_size=3)) if i > 1 else []
        rels = tuple(
            Relation(type=draw(st.sampled_from(LINK_TYPES)), related_state_id=f"S{t}")
            for t in targets
        )
        variables = draw(
            st.lists(
                st.tuples(st.sampled_from("abc"), st.integers(1, 3)),
                max_size=2,
                unique_by=lambda v: v[0],
            )
        )
        states.append(
            AnalyticalState(
                id=f"S{i}",
                issue=f"issue {i}",
                relations=rels,
                used_variables=tuple(
                    VariableRef(name=name, version=ver, value_summary=f"{name}{ver}")
                    for name, ver in variables
                ),
                conclusions=(f"conclusion {i}",),
            )
        )
    return states


def _reference_upstream(states: list[AnalyticalState], sid: str) -> set[str]:
    by_id = {s.id: s for s in states}
    seen: set[str] = set()
    stack = list(by_id[sid].related_ids)
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(by_id[node].related_ids)
    return seen


@settings(max_examples=100, deadline=None)
@given(states=random_dags(), max_chars=st.integers(min_value=0, max_value=1500))
def test_graph_queries_consistent_on_random_dags(states, max_chars) -> None:
    with StateStore(":memory:") as store:
        for state in states:
            store.commit(state)
        ids = [s.id for s in states]
        by_id = {s.id: s for s in states}
        up = {sid: store.upstream(sid) for sid in ids}
        down = {sid: store.downstream(sid) for sid in ids}
        rel = {sid: store.related(sid) for sid in ids}
        for a in ids:
            assert set(up[a]) == _reference_upstream(states, a)
            assert a not in up[a] and a not in down[a]
            assert set(rel[a]) == set(by_id[a].related_ids) | {
                s.id for s in states if a in s.related_ids
            }
            for b in ids:
                assert (a in up[b]) == (b in down[a])
                assert (a in rel[b]) == (b in rel[a])

        order = {sid: i for i, sid in enumerate(ids)}
        inv_map = store.invalidation_map()
        assert set(inv_map) == store.stale_states()
        for victim, invalidators in inv_map.items():
            assert all(order[n] > order[victim] for n in invalidators)
        for state in states:
            hit = store.invalidated_by(state)
            assert all(order[v] < order[state.id] for v in hit)
            for r in state.relations:
                if r.type == "invalidate":
                    assert r.related_state_id in hit
                    assert r.related_state_id in inv_map

        text = store.pack_hint_states(list(reversed(ids)), max_chars=max_chars)
        assert len(text) <= max_chars
        assert text == store.pack_hint_states(list(reversed(ids)), max_chars=max_chars)
        lines = text.splitlines()
        shown = [line[1 : line.index("]")] for line in lines if line.startswith("[")]
        assert shown == sorted(shown, key=order.__getitem__)
        for sid in shown:
            line = next(x for x in lines if x.startswith(f"[{sid}]"))
            assert ("INVALIDATED" in line) == (sid in inv_map)
        if text and len(shown) < len(ids):
            assert lines[-1].startswith(f"({len(ids) - len(shown)} more state")
