"""Which rows the question asks a join to keep: ``"all"``, ``"matching"`` or
``"unstated"``; None when no question is known.

The wording is read in `stateguard.question.joins` (the question's English is read in
`stateguard.question` only); the audit's modules import the reading from here.
`stateguard.audit.joinpolicy` reads the result; ``None`` keeps its code-only line.
"""

from __future__ import annotations

from stateguard.question import RowsAsked, rows_asked

__all__ = ["RowsAsked", "rows_asked"]
