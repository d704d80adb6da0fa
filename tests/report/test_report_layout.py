"""Geometry of the state-graph layout: no overlaps, edges flow down, long edges avoid states."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from report_fixture import STATES

from stateguard.report.layout import NODE_H, NODE_W, Layout, layout, path_data
from stateguard.state import AnalyticalState, Relation

_TYPES = ("progress", "branch", "combine", "invalidate")


def _boxes(placed: Layout) -> dict[str, tuple[float, float, float, float]]:
    return {
        sid: (x - NODE_W / 2, y, x + NODE_W / 2, y + NODE_H) for sid, (x, y) in placed.nodes.items()
    }


def _check(states: list[AnalyticalState], placed: Layout) -> None:
    boxes = _boxes(placed)
    assert set(boxes) == {s.id for s in states}
    items = sorted(boxes.items())
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(items):
        assert ax0 >= 0 and ay0 >= 0 and ax1 <= placed.width and ay1 <= placed.height, a
        for b, (bx0, by0, bx1, by1) in items[i + 1 :]:
            disjoint = ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0
            assert disjoint, f"{a} overlaps {b}"
    drawn = sum(
        1 for s in states for r in s.relations if r.type == "init" or r.related_state_id in boxes
    )
    assert len(placed.edges) == drawn
    for edge in placed.edges:
        ys = [y for _, y in edge.points]
        assert ys == sorted(ys), f"edge {edge} does not flow downwards"
        if edge.related is not None:
            src, dst = boxes[edge.related], boxes[edge.owner]
            assert edge.points[0][1] == src[3] and edge.points[-1][1] == dst[1] - 1
        # the segments through skipped rows stay clear of every state box
        for (x1, y1), (x2, y2) in zip(edge.points[1:-1:2], edge.points[2:-1:2], strict=True):
            assert x1 == x2
            for sid, (bx0, by0, bx1, by1) in boxes.items():
                crosses = bx0 <= x1 <= bx1 and y1 < by1 and by0 < y2
                assert not crosses, f"{edge.owner}<-{edge.related} crosses {sid}"
        assert path_data(edge.points).startswith("M")


def test_fixture_graph_layout() -> None:
    placed = layout(STATES)
    _check(STATES, placed)
    assert placed.start is not None
    rows = {sid: y for sid, (_, y) in placed.nodes.items()}
    assert rows["S1"] < rows["S2"] < rows["S3"]
    assert rows["S2"] < rows["S5"] < rows["S6"]  # S5 invalidates S2, so it sits below it
    long_edge = next(e for e in placed.edges if (e.owner, e.related) == ("S5", "S1"))
    assert len(long_edge.points) == 4  # one skipped row: enter and leave points


def test_empty_layout() -> None:
    placed = layout([])
    assert not placed.nodes and not placed.edges and placed.start is None


@st.composite
def _dags(draw: st.DrawFn) -> list[AnalyticalState]:
    n = draw(st.integers(min_value=1, max_value=9))
    states = []
    for i in range(n):
        targets = (
            draw(st.sets(st.integers(min_value=0, max_value=i - 1), max_size=3)) if i else set()
        )
        rels = tuple(
            Relation(type=draw(st.sampled_from(_TYPES)), related_state_id=f"S{t + 1}")
            for t in sorted(targets)
        ) or ((Relation(type="init"),) if draw(st.booleans()) else ())
        states.append(AnalyticalState(id=f"S{i + 1}", issue="x", relations=rels))
    return states


@settings(max_examples=60, deadline=None)
@given(_dags())
def test_random_graphs_lay_out_cleanly(states: list[AnalyticalState]) -> None:
    _check(states, layout(states))
