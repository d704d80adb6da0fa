"""The analytical-state graph as inline SVG, laid out in Python (no JS library).

Geometry comes from `stateguard.report.layout`: edges point from the older,
related state down to the newer state holding the relation; an ``init``
relation has no target and is drawn from a small *start* marker above the graph.
The page has no script: a state links to its card (``#state-<id>``) and the
full issue and staleness are in its ``<title>`` tooltip.

Markup contract (relied on by tests and styles): each committed state is one
``<g class="state-node">`` (plus ``stale`` when stale) carrying
``data-state-id``; each relation is one ``<path class="state-edge">`` carrying
``data-relation``, ``data-state`` (the state holding the relation) and
``data-related`` (its target, empty for ``init``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from stateguard.report.layout import NODE_H, NODE_W, START_R, layout, path_data
from stateguard.state import AnalyticalState, StaleMark

RELATION_TYPES: tuple[str, ...] = ("init", "progress", "branch", "combine", "invalidate")
"""Every relation type, in legend order."""

RELATION_LABELS: dict[str, str] = {
    "init": "init — starts a line of analysis",
    "progress": "progress — continues the earlier state",
    "branch": "branch — explores an alternative to it",
    "combine": "combine — merges it with other states",
    "invalidate": "invalidate — revises it (it goes stale)",
}
"""Legend text per relation type."""

_VERBS: dict[str, str] = {
    "init": "starts a line of analysis",
    "progress": "progresses from",
    "branch": "branches from",
    "combine": "combines",
    "invalidate": "invalidates",
}

_CHARS = 29
"""Characters of 12px sans-serif text (the issue) that fit in a node line."""
_VAR_CHARS = 28
"""Characters of 11px monospace text (the variables) that fit in a node line."""


def _clip(text: str, limit: int = _CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _attr(text: str) -> str:
    return escape(text, quote=True)


def _markers() -> str:
    parts = ["<defs>"]
    for rel in RELATION_TYPES:
        parts.append(
            f'<marker id="arrow-{rel}" class="arrow arrow-{rel}" viewBox="0 0 10 10" '
            'refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" '
            'orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z"/></marker>'
        )
    parts.append("</defs>")
    return "".join(parts)


def _node_markup(
    state: AnalyticalState,
    centre_x: float,
    top: float,
    invalidators: Sequence[str],
    marks: Sequence[StaleMark] = (),
) -> str:
    stale = bool(invalidators)
    classes = "state-node stale" if stale else "state-node"
    turn = "" if state.turn is None else f" · turn {state.turn}"
    tooltip = f"{state.id}{turn}: {state.issue}"
    if stale:
        tooltip += f"\nSTALE: invalidated by {', '.join(invalidators)}"
        tooltip += "".join(f"\n{m.summary}" for m in marks)
    variables = ", ".join(state.variable_keys) or "no variables"
    superseded = ""
    if marks:
        # the superseded version (and its replacement) in place of the variables line
        variables = f"{marks[0].outdated} → {marks[0].superseded_by}"
        superseded = (
            f' data-superseded="{_attr(marks[0].outdated)}"'
            f' data-superseded-by="{_attr(marks[0].superseded_by)}"'
        )
    x, y = centre_x - NODE_W / 2, top
    tag = (
        f'<text class="stale-tag" x="{x + NODE_W - 10:.1f}" y="{y + 18:.1f}" '
        'text-anchor="end">STALE</text>'
        if stale
        else ""
    )
    return (
        f'<g class="{classes}" data-state-id="{_attr(state.id)}" '
        f'data-stale="{"true" if stale else "false"}"{superseded}>'
        f"<title>{escape(tooltip)}</title>"
        f'<a href="#state-{_attr(state.id)}">'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" height="{NODE_H}" rx="8"/>'
        f'<text class="node-id" x="{x + 10:.1f}" y="{y + 18:.1f}">'
        f'{escape(state.id)}<tspan class="node-turn">{escape(turn)}</tspan></text>{tag}'
        f'<text class="node-issue" x="{x + 10:.1f}" y="{y + 36:.1f}">'
        f"{escape(_clip(state.issue))}</text>"
        f'<text class="node-vars" x="{x + 10:.1f}" y="{y + 52:.1f}">'
        f"{escape(_clip(variables, _VAR_CHARS))}</text>"
        "</a></g>"
    )


def _edge_markup(rel: str, owner: str, related: str | None, path: str) -> str:
    title = f"{owner} {_VERBS[rel]}" + (f" {related}" if related else "")
    return (
        f'<path class="state-edge edge-{rel}" data-relation="{rel}" '
        f'data-state="{_attr(owner)}" data-related="{_attr(related or "")}" '
        f'd="{path}" marker-end="url(#arrow-{rel})"><title>{escape(title)}</title></path>'
    )


def render_state_graph(
    states: Sequence[AnalyticalState],
    invalidators: Mapping[str, Sequence[str]],
    marks: Mapping[str, Sequence[StaleMark]] | None = None,
) -> str:
    """Inline ``<svg>`` of the committed ``states`` (commit order) and their relations.

    ``invalidators`` maps each stale state id to the ids invalidating it; ``marks`` (when
    known) to which of its versions is stale and what superseded it: a stale node names
    the first one. Relations whose target is not among ``states`` are not drawn.
    """
    marks = marks or {}
    placed = layout(states)
    w, h = f"{placed.width:.0f}", f"{placed.height:.0f}"
    parts = [
        '<svg class="state-graph" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-label="analytical-state graph" width="{w}" height="{h}" viewBox="0 0 {w} {h}">',
        _markers(),
    ]
    if placed.start is not None:
        cx, cy = placed.start
        parts.append(
            f'<g class="graph-start"><circle cx="{cx:.1f}" cy="{cy:.1f}" r="{START_R}"/>'
            f'<text x="{cx + START_R + 6:.1f}" y="{cy + 4:.1f}">start</text></g>'
        )
    edges = "".join(
        _edge_markup(e.type, e.owner, e.related, path_data(e.points)) for e in placed.edges
    )
    parts.append(f'<g class="edges">{edges}</g>')
    nodes = "".join(
        _node_markup(s, *placed.nodes[s.id], invalidators.get(s.id, ()), marks.get(s.id, ()))
        for s in states
    )
    parts.append(f'<g class="nodes">{nodes}</g></svg>')
    return "".join(parts)


def render_legend() -> str:
    """HTML legend: one sample line per relation type, plus the stale node style."""
    items = []
    for rel in RELATION_TYPES:
        items.append(
            f'<li data-relation="{rel}"><svg width="46" height="14" aria-hidden="true">'
            f'<path class="edge-{rel}" d="M2,7 L36,7" marker-end="url(#arrow-{rel})"/></svg>'
            f"{escape(RELATION_LABELS[rel])}</li>"
        )
    items.append(
        '<li><svg width="46" height="18" aria-hidden="true"><rect class="legend-node" '
        'x="2" y="2" width="38" height="14" rx="4"/></svg>committed state</li>'
    )
    items.append(
        '<li><svg width="46" height="18" aria-hidden="true"><rect class="legend-node stale" '
        'x="2" y="2" width="38" height="14" rx="4"/></svg>stale (a version it read or '
        "produced was superseded, or derived from one that was; the node names it)</li>"
    )
    return (
        '<div class="legend"><p class="legend-note">Arrows point from a state to the later '
        "state that holds the relation; click a state for its details.</p>"
        f'<ul class="legend-list">{"".join(items)}</ul></div>'
    )
