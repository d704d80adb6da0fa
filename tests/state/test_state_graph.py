"""Graph queries, invalidation and hint packing of the StateStore."""

from __future__ import annotations

import pytest

from stateguard.errors import StoreError
from stateguard.state import AnalyticalState, Relation, StaleMark, StateStore, VariableRef


@pytest.fixture
def chain(store: StateStore, mk) -> StateStore:
    """S1 init; S2 progress S1; S3 branch S1; S4 combine S2+S3; S5 draft progress S4."""
    store.commit(mk("S1", issue="load", rels=(("init", None),), variables=(("df", 1, "df"),)))
    store.commit(mk("S2", issue="margin", rels=(("progress", "S1"),), variables=(("m", 1, "0.3"),)))
    store.commit(mk("S3", issue="alt", rels=(("branch", "S1"),), variables=(("k", 1, "5"),)))
    store.commit(mk("S4", issue="both", rels=(("combine", "S2"), ("combine", "S3"))))
    store.save_draft(mk("S5", issue="next", rels=(("progress", "S4"),)))
    return store


def test_related_both_directions(chain: StateStore) -> None:
    assert chain.related("S1") == ["S2", "S3"]
    assert chain.related("S2") == ["S1", "S4"]
    assert chain.related("S4") == ["S2", "S3"]


def test_upstream_downstream(chain: StateStore) -> None:
    assert chain.upstream("S4") == ["S1", "S2", "S3"]
    assert chain.upstream("S1") == []
    assert chain.downstream("S1") == ["S2", "S3", "S4"]
    assert chain.downstream("S3") == ["S4"]


def test_graph_queries_on_draft(chain: StateStore) -> None:
    assert chain.related("S5") == ["S4"]
    assert chain.upstream("S5") == ["S1", "S2", "S3", "S4"]
    assert chain.downstream("S5") == []
    # Drafts are not part of the committed graph seen from other states.
    assert chain.downstream("S4") == []


def test_graph_query_unknown_id(chain: StateStore) -> None:
    for query in (chain.related, chain.upstream, chain.downstream):
        with pytest.raises(StoreError, match="S42: unknown state id"):
            query("S42")


def test_invalidated_by_explicit_relation_propagates(chain: StateStore, mk) -> None:
    new = mk("S6", rels=(("invalidate", "S2"),))
    assert chain.invalidated_by(new) == ["S2", "S4"]


def test_invalidated_by_variable_version(chain: StateStore, mk) -> None:
    assert chain.invalidated_by(mk("S6", variables=(("m", 2, "0.38"),))) == ["S2", "S4"]
    assert chain.invalidated_by(mk("S6", variables=(("df", 2, "clean"),))) == [
        "S1", "S2", "S3", "S4",
    ]  # fmt: skip
    # Same or lower versions, or other names, invalidate nothing.
    assert chain.invalidated_by(mk("S6", variables=(("m", 1, "0.3"), ("z", 9, "")))) == []
    assert chain.invalidated_by(mk("S6", variables=(("k", 0, ""),))) == []


def test_invalidated_by_ignores_unknown_targets(chain: StateStore, mk) -> None:
    assert chain.invalidated_by(mk("S6", rels=(("invalidate", "S5"),))) == []


def test_invalidate_edges_do_not_propagate(store: StateStore, mk) -> None:
    store.commit(mk("S1", variables=(("x", 1, ""),)))
    store.commit(mk("S2", rels=(("invalidate", "S1"),), variables=(("x", 2, ""),)))
    store.commit(mk("S3", rels=(("progress", "S1"),)))
    # S2 replaced S1; making S1 stale again must not drag S2 along, but S3 built on S1.
    assert store.invalidated_by(mk("S4", rels=(("invalidate", "S1"),))) == ["S1", "S3"]


def test_stale_states(store: StateStore, mk) -> None:
    store.commit(mk("S1", variables=(("m", 1, "0.3"),)))
    store.commit(mk("S2", rels=(("progress", "S1"),)))
    store.commit(mk("S3", rels=(("progress", "S1"),), variables=(("m", 2, "0.38"),)))
    store.commit(mk("S4", rels=(("progress", "S3"),), variables=(("m", 2, "0.38"),)))
    # S3 and S4 (later states using m@v2) invalidate S1 and S2 downstream of it, not S3.
    assert store.stale_states() == {"S1", "S2"}
    assert store.invalidation_map() == {"S1": ("S3", "S4"), "S2": ("S3", "S4")}
    # Seen from a committed state, only earlier states count.
    assert store.invalidated_by(store.get("S3")) == ["S1", "S2"]
    assert store.invalidated_by(store.get("S1")) == []


def test_recomputing_successor_is_not_dragged_along(store: StateStore, mk) -> None:
    store.commit(mk("S1", variables=(("m", 1, "0.3"),)))
    store.commit(mk("S2", rels=(("progress", "S1"),), variables=(("m", 2, "0.38"),)))
    # S2 progressed from S1 but recomputed m: invalidating S1 again leaves S2 valid.
    assert store.invalidated_by(mk("S3", rels=(("invalidate", "S1"),))) == ["S1"]
    assert store.invalidated_by(mk("S3", variables=(("m", 3, ""),))) == ["S1", "S2"]


def test_stale_states_empty(chain: StateStore) -> None:
    assert chain.stale_states() == set()


def test_pack_hint_format(store: StateStore, mk) -> None:
    store.commit(
        mk("S1", issue="margin", variables=(("margin", 1, "0.31"),), rels=(("init", None),))
    )
    store.commit(
        mk(
            "S2",
            issue="margin\nwithout refunds",
            variables=(("margin", 2, "0.38"), ("df", 3, "")),
            conclusions=("margin is 38%", "refunds matter"),
            rels=(("invalidate", "S1"),),
        )
    )
    text = store.pack_hint_states(["S2", "S1"])
    assert text.splitlines() == [
        "[S1] (INVALIDATED by S2) issue: margin; variables: margin@v1=0.31; relations: init",
        "[S2] issue: margin without refunds; variables: margin@v2=0.38, df@v3; "
        "conclusions: margin is 38% | refunds matter; relations: invalidate→S1",
    ]
    assert store.pack_hint_states(["S1", "S2", "S1"]) == text
    assert store.pack_hint_states([]) == ""


def test_pack_hint_truncates_value_summaries(store: StateStore, mk) -> None:
    store.commit(mk("S1", variables=(("df", 1, "x" * 500),)))
    line = store.pack_hint_states(["S1"])
    assert "df@v1=" + "x" * 39 + "…" in line
    assert len(line) < 120


def test_pack_hint_rejects_non_committed(chain: StateStore) -> None:
    with pytest.raises(StoreError, match="pack_hint_states S5: not a committed state"):
        chain.pack_hint_states(["S1", "S5"])
    with pytest.raises(StoreError, match="max_chars"):
        chain.pack_hint_states(["S1"], max_chars=-1)


@pytest.fixture
def wide(store: StateStore, mk) -> StateStore:
    """S1 hub; S2..S7 progress from S1 with long content; S8 combines S2 and S3."""
    store.commit(mk("S1", issue="hub " * 10, conclusions=("hub conclusion " * 5,)))
    for i in range(2, 8):
        store.commit(
            mk(
                f"S{i}",
                issue=f"question {i} " * 8,
                rels=(("progress", "S1"),),
                variables=tuple((f"v{i}_{j}", 1, "summary " * 6) for j in range(4)),
                conclusions=(f"finding {i} " * 12, "second finding " * 4),
            )
        )
    store.commit(mk("S8", issue="combine", rels=(("combine", "S2"), ("combine", "S3"))))
    return store


@pytest.mark.parametrize("budget", [0, 10, 60, 150, 300, 600, 1000, 2000, 5000])
def test_pack_hint_respects_budget(wide: StateStore, budget: int) -> None:
    ids = [f"S{i}" for i in range(1, 9)]
    text = wide.pack_hint_states(ids, max_chars=budget)
    assert len(text) <= budget
    assert text == wide.pack_hint_states(ids, max_chars=budget)
    full_lines = wide.pack_hint_states(ids, max_chars=100_000).splitlines()
    lines = text.splitlines()
    shown = [line for line in lines if line.startswith("[")]
    for line in shown:
        # Never a line cut in the middle: each shown line is a known rendering of its state.
        sid = line[1 : line.index("]")]
        assert line.startswith(f"[{sid}] issue: ")
    if len(shown) < 8 and text:
        assert lines[-1] == f"({8 - len(shown)} more states omitted)"
    if budget >= 5000:
        assert lines == full_lines


def test_pack_hint_drops_least_related_first(wide: StateStore) -> None:
    ids = [f"S{i}" for i in range(1, 9)]
    text = wide.pack_hint_states(ids, max_chars=700)
    shown = [line[1 : line.index("]")] for line in text.splitlines() if line.startswith("[")]
    # Relatedness ranking: S1 (6 links), S2, S3, S8 (2 links), then the leaves S4..S7.
    ranking = ["S1", "S2", "S3", "S8", "S4", "S5", "S6", "S7"]
    assert 2 <= len(shown) < 8
    assert set(shown) == set(ranking[: len(shown)])
    assert text.endswith("more states omitted)")
    # Lines are in commit order.
    assert shown == sorted(shown, key=lambda s: int(s[1:]))


def test_pack_hint_compacts_before_omitting(wide: StateStore) -> None:
    ids = [f"S{i}" for i in range(1, 9)]
    full = wide.pack_hint_states(ids, max_chars=100_000)
    text = wide.pack_hint_states(ids, max_chars=len(full) - 1)
    assert "omitted" not in text
    assert len(text.splitlines()) == 8
    # The least related state (last of the leaves in the caller's order) is compacted first.
    s7 = next(line for line in text.splitlines() if line.startswith("[S7]"))
    assert "summary" not in s7 and "v7_0@v1" in s7


def _roles(*refs: tuple[str, int, str]) -> tuple[VariableRef, ...]:
    return tuple(VariableRef(name=n, version=v, role=r) for n, v, r in refs)  # type: ignore[arg-type]


def test_states_with_roles_are_stale_exactly_when_a_later_commit_marked_them(store) -> None:
    s1 = AnalyticalState(id="S1", issue="rate", used_variables=_roles(("rate", 1, "produced")))
    s2 = AnalyticalState(
        id="S2",
        issue="cost",
        used_variables=_roles(("rate", 1, "read"), ("cost", 1, "produced")),
        relations=(Relation(type="progress", related_state_id="S1"),),
    )
    mark = StaleMark(state_id="S1", version="rate@v1", outdated="rate@v1", superseded_by="rate@v2")
    derived = StaleMark(
        state_id="S2", version="cost@v1", outdated="rate@v1", superseded_by="rate@v2"
    )
    # an unrelated later state (S4, no shared name) found them stale and holds the marks
    s3 = AnalyticalState(id="S3", issue="other", used_variables=_roles(("z", 1, "produced")))
    s4 = AnalyticalState(
        id="S4",
        issue="later",
        used_variables=_roles(("y", 1, "produced")),
        stale_marks=(mark, derived),
    )
    for s in (s1, s2, s3, s4):
        store.commit(s)
    assert store.invalidation_map() == {"S1": ("S4",), "S2": ("S4",)}
    assert store.stale_states() == {"S1", "S2"}
    assert store.stale_marks() == {"S1": (mark,), "S2": (derived,)}
    # a marked state is stale even though no relation invalidates it; the packed hint says so
    assert "[S2] (INVALIDATED by S4)" in store.pack_hint_states(["S2"])


def test_with_roles_a_newer_version_alone_marks_nothing_stale(store) -> None:
    s1 = AnalyticalState(id="S1", issue="frame", used_variables=_roles(("df", 1, "produced")))
    # the legacy name rule would call S1 invalidated by this df@v3
    s2 = AnalyticalState(id="S2", issue="column", used_variables=_roles(("df", 3, "read")))
    for s in (s1, s2):
        store.commit(s)
    assert store.invalidation_map() == {} and store.stale_states() == set()
