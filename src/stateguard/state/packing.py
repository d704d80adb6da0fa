"""Deterministic, size-bounded text packing of analytical states for worker hints.

Each state becomes exactly one line (newlines inside fields are collapsed), so
dropping content never cuts a line in the middle. Three detail levels exist
per state: full, compact, omitted. When the text exceeds the budget, states
are first compacted and then omitted, least related first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stateguard.state.models import AnalyticalState

FULL, COMPACT, OMITTED = 2, 1, 0
"""Detail levels of one state line."""

_FULL_ISSUE = 200
_FULL_CONSTRAINT = 120
_FULL_VALUE = 40
_FULL_CONCLUSION = 200
_COMPACT_ISSUE = 80
_COMPACT_CONCLUSION = 80
_COMPACT_VARIABLES = 6


def clip(text: str, limit: int) -> str:
    """Collapse whitespace (incl. newlines) and shorten to ``limit`` chars with ``…``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)].rstrip() + "…"


def render_state(state: AnalyticalState, level: int, invalidators: Sequence[str] = ()) -> str:
    """Render one state as a single line at detail ``level`` (FULL or COMPACT)."""
    head = f"[{state.id}]"
    if invalidators:
        head += f" (INVALIDATED by {', '.join(invalidators)})"
    full = level >= FULL
    parts = [f"{head} issue: {clip(state.issue, _FULL_ISSUE if full else _COMPACT_ISSUE)}"]
    if full and state.constraints:
        texts = "; ".join(clip(c.text, _FULL_CONSTRAINT) for c in state.constraints)
        parts.append(f"constraints: {texts}")
    if state.used_variables:
        if full:
            refs = []
            for ref in state.used_variables:
                summary = clip(ref.value_summary, _FULL_VALUE)
                refs.append(f"{ref.key}={summary}" if summary else ref.key)
            parts.append("variables: " + ", ".join(refs))
        else:
            keys = list(state.variable_keys[:_COMPACT_VARIABLES])
            extra = len(state.used_variables) - len(keys)
            if extra:
                keys.append(f"+{extra} more")
            parts.append("variables: " + ", ".join(keys))
    if state.conclusions:
        if full:
            texts = " | ".join(clip(c, _FULL_CONCLUSION) for c in state.conclusions)
        else:
            texts = clip(state.conclusions[0], _COMPACT_CONCLUSION)
            if len(state.conclusions) > 1:
                texts += f" (+{len(state.conclusions) - 1} more)"
        parts.append(f"conclusions: {texts}")
    if state.relations:
        parts.append("relations: " + ", ".join(r.summary for r in state.relations))
    return "; ".join(parts)


def _relatedness(states: Sequence[AnalyticalState]) -> dict[str, int]:
    """Number of other packed states each state is directly related to (either direction)."""
    ids = {s.id for s in states}
    links: dict[str, set[str]] = {s.id: set() for s in states}
    for state in states:
        for target in state.related_ids:
            if target in ids and target != state.id:
                links[state.id].add(target)
                links[target].add(state.id)
    return {k: len(v) for k, v in links.items()}


def _omitted_note(count: int) -> str:
    return f"({count} more state{'s' if count != 1 else ''} omitted)"


def pack_states(
    states: Sequence[AnalyticalState],
    *,
    commit_order: Mapping[str, int],
    invalidators: Mapping[str, Sequence[str]],
    max_chars: int,
) -> str:
    """Pack ``states`` into at most ``max_chars`` characters, one line per state.

    ``states`` is in the caller's priority order (earlier = more relevant) and
    must be free of duplicates. Lines appear in ``commit_order``. Relevance
    for degradation: most direct relations to other packed states first, then
    the caller's order. All states are compacted (least relevant first)
    before any is omitted; once states were omitted, surviving ones regain
    full detail where the budget allows. Omitted states are counted in a final
    ``(k more states omitted)`` line. Returns ``""`` when not even that fits.
    """
    position = {s.id: i for i, s in enumerate(states)}
    score = _relatedness(states)
    # Most relevant first; the tail is degraded first.
    ranking = sorted(states, key=lambda s: (-score[s.id], position[s.id]))
    display = sorted(states, key=lambda s: (commit_order.get(s.id, len(commit_order)), s.id))
    levels = {s.id: FULL for s in states}

    def render() -> str:
        lines = [
            render_state(s, levels[s.id], invalidators.get(s.id, ()))
            for s in display
            if levels[s.id] != OMITTED
        ]
        omitted = sum(1 for level in levels.values() if level == OMITTED)
        if omitted:
            lines.append(_omitted_note(omitted))
        return "\n".join(lines)

    text = render()
    for target in (COMPACT, OMITTED):
        for state in reversed(ranking):
            if len(text) <= max_chars:
                return text
            levels[state.id] = target
            text = render()
    if len(text) > max_chars:
        return ""
    # Omitting freed room: give compacted survivors full detail back, most relevant first.
    for state in ranking:
        if levels[state.id] == COMPACT:
            levels[state.id] = FULL
            candidate = render()
            if len(candidate) <= max_chars:
                text = candidate
            else:
                levels[state.id] = COMPACT
    return text
