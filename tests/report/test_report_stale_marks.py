"""States recorded with lineage roles: the graph draws STALE exactly the states a later
commit marked, and names the superseded version; an invalidate edge alone marks nothing."""

from __future__ import annotations

from pathlib import Path

from report_fixture import build_run, parse

from stateguard.report import load_run, write_report
from stateguard.state import AnalyticalState, Relation, StaleMark, StateStore, VariableRef


def _refs(*refs: tuple[str, int, str]) -> tuple[VariableRef, ...]:
    return tuple(VariableRef(name=n, version=v, role=r) for n, v, r in refs)  # type: ignore[arg-type]


RATE = StaleMark(state_id="S2", version="rate@v1", outdated="rate@v1", superseded_by="rate@v2")
COST = StaleMark(state_id="S3", version="cost@v1", outdated="rate@v1", superseded_by="rate@v2")

STATES = [
    AnalyticalState(
        id="S1", issue="load", turn=1, used_variables=_refs(("df", 1, "produced")),
        relations=(Relation(type="init"),),
    ),
    AnalyticalState(
        id="S2", issue="rate", turn=2, used_variables=_refs(("rate", 1, "produced")),
        relations=(Relation(type="init"),),
    ),
    AnalyticalState(
        id="S3", issue="cost", turn=3,
        used_variables=_refs(("df['a']", 1, "read"), ("rate", 1, "read"), ("cost", 1, "produced")),
        relations=(Relation(type="combine", related_state_id="S1"),
                   Relation(type="combine", related_state_id="S2")),
    ),
    AnalyticalState(
        id="S4", issue="new column", turn=4,
        used_variables=_refs(("df['a']", 1, "read"), ("df['b']", 1, "produced")),
        relations=(Relation(type="branch", related_state_id="S1"),),
    ),
    AnalyticalState(
        id="S5", issue="revise the rate", turn=5, used_variables=_refs(("rate", 2, "produced")),
        relations=(Relation(type="invalidate", related_state_id="S2"),
                   Relation(type="invalidate", related_state_id="S3")),
        stale_marks=(RATE, COST),
    ),
]  # fmt: skip


def _run(tmp_path: Path) -> Path:
    run = build_run(tmp_path, states=False)
    with StateStore(run / "states.sqlite") as store:
        for state in STATES:
            store.commit(state)
    return run


def test_stale_nodes_are_the_marked_states_and_name_the_superseded_version(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    data = load_run(run)
    assert data.stale == {"S2", "S3"}
    assert data.stale_marks == {"S2": (RATE,), "S3": (COST,)}
    dom = parse(write_report(run).read_text(encoding="utf-8"))
    nodes = {n["data-state-id"]: n for n in dom.with_class("state-node")}
    assert {k for k, n in nodes.items() if n["data-stale"] == "true"} == {"S2", "S3"}
    assert nodes["S3"]["data-superseded"] == "rate@v1"
    assert nodes["S3"]["data-superseded-by"] == "rate@v2"
    assert "data-superseded" not in nodes["S4"]  # a column added: not stale
    text = " ".join(dom.text)
    assert "cost@v1 ← rate@v1 superseded by rate@v2" in text  # the card and the tooltip
    assert "rate@v1 → rate@v2" in text  # the node's own line


def test_without_a_mark_an_invalidate_edge_does_not_make_a_state_stale(tmp_path: Path) -> None:
    run = _run(tmp_path)
    # the same graph, but no commit recorded a mark: the report draws staleness from marks
    with StateStore(run / "states.sqlite") as store:
        assert store.stale_states() == {"S2", "S3"}
    other = tmp_path / "other"
    other.mkdir()
    run2 = build_run(other, states=False)
    with StateStore(run2 / "states.sqlite") as store:
        for state in STATES[:-1]:
            store.commit(state)
        store.commit(STATES[-1].model_copy(update={"stale_marks": ()}))
    dom = parse(write_report(run2).read_text(encoding="utf-8"))
    assert not [n for n in dom.with_class("state-node") if n["data-stale"] == "true"]
    assert len([e for e in dom.with_class("state-edge") if e["data-relation"] == "invalidate"]) == 2
