"""Every word the agent reads from the manager: templates and the one renderer.

The manager sends typed notices (`stateguard.manager.notes`); `HintRenderer` fills
`HintTemplates` (package data ``templates/default.toml``, or a file of one's own).
"""

from stateguard.hints.compact import compact_state_hint
from stateguard.hints.render import HintRenderer
from stateguard.hints.templates import HintTemplateError, HintTemplates
from stateguard.manager.notes import RepairNotice, StateNote, StateNotice

__all__ = [
    "HintRenderer",
    "HintTemplateError",
    "HintTemplates",
    "RepairNotice",
    "StateNote",
    "StateNotice",
    "compact_state_hint",
]
