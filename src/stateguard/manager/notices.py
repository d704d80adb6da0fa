"""Build the typed notices the harness sends (`stateguard.manager.notes`); no wording here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stateguard.finding import Finding
from stateguard.manager.notes import (
    EvidenceFacts,
    RepairMode,
    RepairNotice,
    StateNote,
    StateNotice,
)
from stateguard.manager.protocol import Hint
from stateguard.state import AnalyticalState, StateStore
from stateguard.types import VarKey


def hint_state_ids(
    store: StateStore,
    draft: AnalyticalState | None,
    recent: int,
    revised: Mapping[str, str] | None = None,
) -> list[str]:
    """States worth a note: the draft's related ones, the ``recent`` last, every stale one
    (by lineage, or by a revised input: ``revised``, see `turn_state_hint`)."""
    committed = store.committed()
    if not committed:
        return []
    ids: dict[str, None] = {}
    if draft is not None:
        ids.update(dict.fromkeys(r.related_state_id for r in draft.relations if r.related_state_id))
    ids.update(dict.fromkeys(s.id for s in committed[-recent:]))
    ids.update(dict.fromkeys(sorted(store.stale_states())))
    if revised:
        ids.update(
            dict.fromkeys(s.id for s in committed if any(k in revised for k in s.variable_keys))
        )
    return list(ids)


def turn_state_hint(
    store: StateStore,
    draft: AnalyticalState | None,
    recent: int,
    revised: Mapping[str, str] | None = None,
) -> Hint | None:
    """The state note shown at a turn's start (None when ``recent`` is 0 or nothing is due).

    ``revised``: versions that carry a revised parameter's old value, with why
    (`stateguard.manager.revisions.revised_versions`); a state that used one is stale."""
    if recent == 0:
        return None
    return state_hint(store, hint_state_ids(store, draft, recent, revised), revised)


def state_hint(
    store: StateStore, state_ids: Sequence[str], revised: Mapping[str, str] | None = None
) -> Hint | None:
    """Notes on the given committed states (invalidations and revised inputs marked); None
    when there are none."""
    invalidated = store.invalidation_map()
    marks = store.stale_marks()
    revised = revised or {}
    notes = []
    for sid in state_ids:
        state = store.get(sid)
        if state.status != "committed":
            continue
        old_values = tuple(
            f"{VarKey.name_of(k)} {revised[k]}" for k in state.variable_keys if k in revised
        )
        notes.append(
            StateNote(
                id=state.id,
                issue=state.issue,
                variables=tuple(state.variable_keys),
                conclusions=state.conclusions,
                relations=tuple(r.summary for r in state.relations if r.type != "init"),
                invalidated_by=tuple(invalidated.get(state.id, ())),
                stale=tuple(m.summary for m in marks.get(state.id, ())) + old_values,
            )
        )
    if not notes:
        return None
    return Hint(
        kind="state",
        notice=StateNotice(states=tuple(notes)),
        state_ids=tuple(n.id for n in notes),
    )


def repair_hint(
    evidence: Sequence[Finding],
    reasoning: str,
    mode: RepairMode,
    *,
    checks: Sequence[str] = (),
    state_id: str | None,
    removed: Sequence[str] = (),
    restored: Sequence[str] = (),
    checkpoint: str | None = None,
) -> Hint:
    """A repair notice: suspected variables, the evidence, and which checks failed."""
    suspects = tuple(sorted({v for e in evidence for v in e.variables}))
    notice = RepairNotice(
        error_variables=suspects,
        evidence=tuple(evidence),
        checks=tuple(dict.fromkeys(checks)),
        reasoning=reasoning,
        mode=mode,
        removed=tuple(removed),
        restored=tuple(restored),
        checkpoint=checkpoint,
    )
    return Hint(
        kind="repair",
        notice=notice,
        state_ids=(state_id,) if state_id else (),
        variables=suspects,
        evidence=tuple(s for e in evidence for s in EvidenceFacts.of(e).superseding)
        or tuple(e.message for e in evidence),
    )
