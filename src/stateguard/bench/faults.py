"""What fault injection reasons about: facts of the clean run, candidate faults, source spans.

Shared by `stateguard.bench.inject` (stale reuse, choice) and
`stateguard.bench.mutations` (the AST kinds).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict


class TurnFacts(BaseModel):
    """What the clean reference run says about one turn (from its lineage)."""

    model_config = ConfigDict(frozen=True)

    turn_id: int
    code: str
    ok: bool
    reads: tuple[str, ...] = ()
    """Version keys the reference cell read (module versions excluded)."""
    created: tuple[str, ...] = ()
    """Version keys the reference cell created."""
    rerunnable: bool = False
    rebinds: tuple[str, ...] = ()
    """Names that existed before the turn and that its code rebinds from their own value
    or changes in place: why it is not rerunnable."""
    after_revision: bool = False
    """Some version the turn builds on (transitively) is a revision (``@v2`` or later)."""


class VersionFact(BaseModel):
    """One version of the clean run: name, number and the turn that created it."""

    model_config = ConfigDict(frozen=True)

    key: str
    name: str
    version: int
    turn: int


class Candidate(BaseModel):
    """One possible fault: where, what, and the code the faulty worker runs instead."""

    model_config = ConfigDict(frozen=True)

    kind: str
    turn_id: int
    faulty_code: str
    description: str
    variable: str | None = None
    alias: str | None = None
    read_version: str | None = None
    pre_version: str | None = None
    revision_turn: int | None = None
    node: dict[str, object] | None = None
    after_revision: bool = True
    restore: tuple[str, ...] = ()
    """Names to restore from a checkpoint taken before the faulty run, so that the redo
    after a repair starts from the turn's starting state (a turn that is not rerunnable)."""

    @property
    def ident(self) -> str:
        """A stable identifier within a task."""
        where = self.variable or f"{(self.node or {}).get('line')}:{(self.node or {}).get('col')}"
        return f"{self.kind}@{self.turn_id}:{where}:{self.description}"


# -- source splicing ------------------------------------------------------------


class _Source:
    """Byte offsets of AST positions (``col_offset`` counts UTF-8 bytes)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.data = code.encode("utf-8")
        self.starts = [0]
        for line in self.data.split(b"\n")[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end = self.starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
        return start, end

    def text(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.data[a:b].decode("utf-8")

    def splice(self, edits: Iterable[tuple[int, int, str]]) -> str:
        out = self.data
        for a, b, new in sorted(edits, key=lambda e: e[0], reverse=True):
            out = out[:a] + new.encode("utf-8") + out[b:]
        return out.decode("utf-8")


def _node_info(src: _Source, node: ast.AST, replacement: str) -> dict[str, object]:
    return {
        "line": node.lineno,  # type: ignore[attr-defined]
        "col": node.col_offset,  # type: ignore[attr-defined]
        "original": src.text(node),
        "replacement": replacement,
    }


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


# -- stale reuse ----------------------------------------------------------------
