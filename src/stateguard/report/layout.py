"""Layered layout of the state graph (a small Sugiyama-style layout, pure geometry).

Steps: (1) layers = topological generations of the older→newer graph, so every
edge points downwards (a *start* row above holds the marker ``init`` edges
come from); (2) an edge skipping layers gets one narrow virtual item per
skipped layer, so it is routed through a reserved slot instead of across the
states in between; (3) items of a layer are ordered by the barycenter of their
neighbours (alternating down and up sweeps); (4) x coordinates are pulled
toward the neighbours' mean and then separated. Edge ends are spread along
the bottom/top side of a state, sorted by where the other end lies, so arrows
never stack on one point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import networkx as nx

from stateguard.state import AnalyticalState

NODE_W, NODE_H = 220, 62
V_GAP = 54
H_GAP = 48
VIRTUAL_W = 12
VIRTUAL_GAP = 16
START_R = 9
MARGIN = 24
_SWEEPS = 4

START = "\x00start"
"""Key of the start marker (state ids never contain NUL)."""

Item = str | tuple[int, int]
"""A layout item: a state id, START, or a virtual ``(edge index, row)``."""


@dataclass(frozen=True)
class LayoutEdge:
    """One drawn relation: ``owner`` holds a relation of ``type`` to ``related``."""

    type: str
    owner: str
    related: str | None
    points: tuple[tuple[float, float], ...]
    """Polyline: source bottom, (enter, leave) per skipped row, target top."""


@dataclass
class Layout:
    """Positions of every state (centre x, top y), the start marker and every edge."""

    width: float = 0.0
    height: float = 0.0
    nodes: dict[str, tuple[float, float]] = field(default_factory=dict)
    start: tuple[float, float] | None = None
    edges: list[LayoutEdge] = field(default_factory=list)


def _generations(states: Sequence[AnalyticalState]) -> list[list[str]]:
    order = {s.id: i for i, s in enumerate(states)}
    graph = nx.DiGraph()
    graph.add_nodes_from(order)
    for state in states:
        for target in state.related_ids:
            if target in order:
                graph.add_edge(target, state.id)
    if not nx.is_directed_acyclic_graph(graph):
        return [[s.id] for s in states]  # defensive: the store only commits DAGs
    return [sorted(g, key=order.__getitem__) for g in nx.topological_generations(graph)]


def _width(item: Item) -> float:
    if item == START:
        return 2 * START_R
    return NODE_W if isinstance(item, str) else VIRTUAL_W


def _sep(a: Item, b: Item) -> float:
    gap = H_GAP if isinstance(a, str) and isinstance(b, str) else VIRTUAL_GAP
    return (_width(a) + _width(b)) / 2 + gap


def _order(
    rows: list[list[Item]], up: dict[Item, list[Item]], down: dict[Item, list[Item]]
) -> None:
    """Barycenter ordering in place (down sweeps use predecessors, up sweeps successors)."""
    for sweep in range(_SWEEPS):
        pos = {item: i for row in rows for i, item in enumerate(row)}
        downward = sweep % 2 == 0
        neighbours = up if downward else down
        indices = range(1, len(rows)) if downward else range(len(rows) - 2, -1, -1)
        for r in indices:
            keys: dict[Item, tuple[float, int]] = {}
            for item in rows[r]:
                others = neighbours.get(item, [])
                bary = sum(pos[o] for o in others) / len(others) if others else pos[item]
                keys[item] = (bary, pos[item])
            rows[r].sort(key=keys.__getitem__)
            pos.update({item: i for i, item in enumerate(rows[r])})


def _place_x(
    rows: list[list[Item]], up: dict[Item, list[Item]], down: dict[Item, list[Item]]
) -> dict[Item, float]:
    """Centre x per item: pulled toward neighbours, separated, rows shifted to balance."""
    x: dict[Item, float] = {}
    for row in rows:
        cursor = 0.0
        for i, item in enumerate(row):
            cursor += _sep(row[i - 1], item) if i else 0.0
            x[item] = cursor
        for item in row:
            x[item] -= cursor / 2
    for sweep in range(_SWEEPS):
        neighbours = up if sweep % 2 == 0 else down
        for row in rows if sweep % 2 == 0 else reversed(rows):
            desired = []
            for item in row:
                others = neighbours.get(item, [])
                desired.append(sum(x[o] for o in others) / len(others) if others else x[item])
            placed = list(desired)
            for i in range(1, len(row)):
                placed[i] = max(placed[i], placed[i - 1] + _sep(row[i - 1], row[i]))
            shift = sum(d - p for d, p in zip(desired, placed, strict=True)) / len(row)
            for item, p in zip(row, placed, strict=True):
                x[item] = p + shift
    return x


def _spread(count: int) -> list[float]:
    """Offsets from a side's centre for ``count`` edge ends."""
    if count <= 1:
        return [0.0] * count
    step = min(26.0, (NODE_W - 60) / (count - 1))
    return [(i - (count - 1) / 2) * step for i in range(count)]


def layout(states: Sequence[AnalyticalState]) -> Layout:
    """Lay out the committed ``states`` (commit order) and their relations."""
    if not states:
        return Layout(width=2 * MARGIN, height=2 * MARGIN)
    rows: list[list[Item]] = [list(g) for g in _generations(states)]
    has_init = any(r.type == "init" for s in states for r in s.relations)
    if has_init:
        rows.insert(0, [START])
    row_of = {item: r for r, row in enumerate(rows) for item in row}

    # chains[i] = items edge i passes through, from its older end to the newer one
    specs: list[tuple[str, str, str | None]] = []
    chains: list[list[Item]] = []
    for state in states:
        for rel in state.relations:
            source = START if rel.type == "init" else rel.related_state_id
            if source is None or source not in row_of:
                continue
            index = len(chains)
            chain: list[Item] = [source]
            for r in range(row_of[source] + 1, row_of[state.id]):
                virtual = (index, r)
                rows[r].append(virtual)
                chain.append(virtual)
            chain.append(state.id)
            chains.append(chain)
            specs.append((rel.type, state.id, rel.related_state_id))
    up: dict[Item, list[Item]] = {}
    down: dict[Item, list[Item]] = {}
    for chain in chains:
        for a, b in pairwise(chain):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
    _order(rows, up, down)
    row_of = {item: r for r, row in enumerate(rows) for item in row}
    x = _place_x(rows, up, down)
    left = min(x[item] - _width(item) / 2 for row in rows for item in row)
    x = {item: v - left + MARGIN for item, v in x.items()}

    tops: list[float] = []
    y = float(MARGIN)
    for row in rows:
        tops.append(y)
        y += (2 * START_R if row == [START] else NODE_H) + V_GAP
    height = y - V_GAP + MARGIN
    width = max(x[item] + _width(item) / 2 for row in rows for item in row) + MARGIN

    def bottom(item: Item) -> float:
        return tops[row_of[item]] + (2 * START_R if item == START else NODE_H)

    # spread edge ends along each state's sides, ordered by the far end's x
    out_off: dict[tuple[int, int], float] = {}
    ends: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for i, chain in enumerate(chains):
        if chain[0] != START:
            ends.setdefault((str(chain[0]), "out"), []).append((x[chain[1]], i))
        ends.setdefault((str(chain[-1]), "in"), []).append((x[chain[-2]], i))
    for (_, side), lst in ends.items():
        lst.sort()
        for offset, (_, i) in zip(_spread(len(lst)), lst, strict=True):
            out_off[(i, 0 if side == "out" else 1)] = offset

    result = Layout(width=width, height=height)
    for row in rows:
        for item in row:
            if isinstance(item, str) and item != START:
                result.nodes[item] = (x[item], tops[row_of[item]])
    if has_init:
        result.start = (x[START], tops[0] + START_R)
    for i, ((rel_type, owner, related), chain) in enumerate(zip(specs, chains, strict=True)):
        src, dst = chain[0], chain[-1]
        points = [(x[src] + out_off.get((i, 0), 0.0), bottom(src))]
        for virtual in chain[1:-1]:
            points.append((x[virtual], tops[row_of[virtual]]))
            points.append((x[virtual], bottom(virtual)))
        points.append((x[dst] + out_off.get((i, 1), 0.0), tops[row_of[dst]] - 1))
        result.edges.append(LayoutEdge(rel_type, owner, related, tuple(points)))
    return result


def path_data(points: Sequence[tuple[float, float]]) -> str:
    """SVG path: vertical-tangent cubic curves between rows, straight through skipped rows."""
    (x0, y0), rest = points[0], points[1:]
    parts = [f"M{x0:.1f},{y0:.1f}"]
    prev = (x0, y0)
    # points after the first alternate: curve to a row's entry, then straight down through it
    for k, (px, py) in enumerate(rest):
        if k % 2 == 0:
            mid = (prev[1] + py) / 2
            parts.append(f"C{prev[0]:.1f},{mid:.1f} {px:.1f},{mid:.1f} {px:.1f},{py:.1f}")
        else:
            parts.append(f"L{px:.1f},{py:.1f}")
        prev = (px, py)
    return " ".join(parts)
