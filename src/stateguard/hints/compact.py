"""A compact state hint: only the earlier states that bear on the new question.

The full state hint lists every recent and every stale state with its relations; a
small model reads it at every turn and copies from it. `compact_state_hint` keeps the
states whose issue, conclusions or variables share a word with the new question (at
most ``limit``, the best-matching first, ties to the newest), one line each::

    <analytical_state_hint>
    S2 (What is the total contribution margin…); uses cogs, contribution
    S5 (…under the revised rate…); uses contribution — STALE: inputs revised by S6
    </analytical_state_hint>

By reference only: a state's concluded values are left out unless ``values=True``. A
small model given an earlier turn's number copies it as the new turn's answer (on the
embedded model, the hybrid manager's answers fell from 5/10 without hints to 1/10 with
them, most of them a value copied from the hint); the names of the variables tell it
where to look, and it prints them itself.

A state whose inputs a later state revised (``StateNote.invalidated_by``, from the
state store's invalidation map) is marked stale with the states that revised it; one
that used a value computed with a parameter the analysis has since revised ("from 42% to
47%", ``StateNote.stale``, from `stateguard.manager.revisions.revised_versions`) is
marked stale with what carries the old value. Stale states come first. No relevant
state: no hint.
"""

from __future__ import annotations

import re

from stateguard.hints.templates import HintTemplates
from stateguard.manager import Hint
from stateguard.manager.notes import StateNote, StateNotice
from stateguard.numbers import is_valueless
from stateguard.question import content_words as words
from stateguard.types import VarKey

_ISSUE_CHARS = 70
_CONCLUSION_CHARS = 90
_VARIABLES = 4
_STALE_CHARS = 120


_MODULES = frozenset({"pd", "np", "plt", "sns", "math", "re", "json", "os", "sys", "datetime"})
"""Names of imported modules: in every state that imports them, about nothing in it."""


def _names(note: StateNote) -> list[str]:
    """The variables of a state, without versions, in order, once each (modules left out)."""
    out: dict[str, None] = {}
    for key in note.variables:
        name = VarKey.name_of(key)
        if name not in _MODULES:
            out.setdefault(name, None)
    return list(out)


_PART = re.compile(r"\[\s*['\"]([^'\"]+)['\"]\s*\]|\.(\w+)$")


def _leaf(name: str) -> str:
    """What a variable name is about: the column or key of a part (``orders['cogs']`` ->
    ``cogs``: the frame's name is in every state that uses the frame), else the name."""
    parts = _PART.findall(name)
    return (parts[-1][0] or parts[-1][1]) if parts else name


def relevance(note: StateNote, question: str) -> int:
    """How many content words (`stateguard.question.content_words`) ``note`` shares with
    ``question`` (its issue, conclusions and what its variables are about)."""
    text = " ".join([note.issue, *note.conclusions, *(_leaf(n) for n in _names(note))])
    return len(words(question) & words(text))


def _age(note: StateNote, position: int) -> tuple[int, int]:
    """Commit order of a state: the number of an ``S<n>`` id, else its place in the notice."""
    digits = note.id[1:]
    return (int(digits), position) if note.id[:1] == "S" and digits.isdigit() else (-1, position)


def relevant_states(notice: StateNotice, question: str, limit: int = 3) -> list[StateNote]:
    """The states of ``notice`` that share a word with ``question``: the best ``limit``
    (ties: the newest), listed oldest first (as the analysis went)."""
    scored = [(relevance(n, question), _age(n, i), n) for i, n in enumerate(notice.states)]
    # a stale state is what the agent most needs to know of: it comes first
    picked = sorted(
        (s for s in scored if s[0] > 0),
        key=lambda s: (not _is_stale(s[2]), -s[0], _neg(s[1])),
    )[:limit]
    return [n for _, _, n in sorted(picked, key=lambda s: s[1])]


def _is_stale(note: StateNote) -> bool:
    return bool(note.invalidated_by or note.stale)


def _neg(age: tuple[int, int]) -> tuple[int, int]:
    return (-age[0], -age[1])


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def state_line(
    note: StateNote, *, values: bool = False, templates: HintTemplates | None = None
) -> str:
    """One state in one line (the ``[compact]`` templates): its issue, its variables,
    stale or not, and (``values``) what it concluded."""
    t = templates or HintTemplates.default()
    issue = _clip(note.issue, _ISSUE_CHARS) if note.issue.strip() else t.part("no_issue")
    # a conclusion that holds no value (None, nan) tells the agent nothing and invites a copy
    concluded = [c for c in note.conclusions if not is_valueless(c)]
    shown = ""
    if values and concluded:
        shown = t.part("values", values=_clip("; ".join(concluded), _CONCLUSION_CHARS))
    elif values and note.conclusions:
        shown = t.part("no_value")
    names = _names(note)
    uses = ""
    if names:
        more = t.part("more_names", count=str(len(names) - _VARIABLES))
        more = more if len(names) > _VARIABLES else ""
        uses = t.part("uses", names=", ".join(names[:_VARIABLES]), more=more)
    stale = ""
    if note.invalidated_by:
        stale = t.part("invalidated", states=", ".join(note.invalidated_by))
    elif note.stale:
        more = t.part("more_stale", count=str(len(note.stale) - 1)) if len(note.stale) > 1 else ""
        stale = t.part("stale", reason=_clip(note.stale[0], _STALE_CHARS), more=more)
    return t.part("line", id=note.id, issue=issue, values=shown, uses=uses, stale=stale)


def compact_state_hint(
    hint: Hint,
    question: str,
    *,
    limit: int = 3,
    values: bool = False,
    templates: HintTemplates | None = None,
) -> Hint | None:
    """``hint`` (a state hint) reduced to the states relevant to ``question`` (the turn's
    question, and its context where it has one), in the compact form of the module
    docstring (with each state's concluded values when ``values``); None when none is
    relevant. Other hints are returned unchanged."""
    notice = hint.notice
    if hint.kind != "state" or not isinstance(notice, StateNotice):
        return hint
    notes = relevant_states(notice, question, limit)
    if not notes:
        return None
    templates = templates or HintTemplates.default()
    body = "\n".join(state_line(n, values=values, templates=templates) for n in notes)
    text = templates.fill("state", states=body)
    return hint.model_copy(
        update={
            "text": text,
            "notice": StateNotice(states=tuple(notes)),
            "state_ids": tuple(n.id for n in notes),
        }
    )
