"""A column defined again from fewer of the columns it was defined from.

Turn 2 computes ``s["gp"] = s["billed"] - s["cost"]``, where ``s["billed"]`` holds the
base charge, the surcharge and the handling fee. Turn 6 writes ``s["gp"] = s["w"] *
s["r"] - s["cost"]``: the same column, now without the surcharge and the fee. Everything
that reads it afterwards silently uses another definition. Run again after a revision
(``s["billed"]`` recomputed with the new rate), the definition reads the same columns;
only a narrowed one reads a strict subset of them.

`narrowed_columns` compares, for each column version a cell wrote, the source columns of
its table it was transitively derived from (those not computed from other columns of the
table) with those of the version before it, written by an earlier cell: it reports the
source columns the new version no longer derives from, when its own are a strict subset
and at least one missing column is one the table still holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from stateguard.lineage.graph import LineageGraph, VariableVersion


class NarrowedColumn(BaseModel):
    """``column`` written as ``version`` from fewer columns than ``earlier`` was."""

    model_config = ConfigDict(frozen=True)

    column: str
    """The column's symbol, ``s['gp']``."""
    version: str
    earlier: str
    earlier_cell: int
    dropped: tuple[str, ...]
    """Columns of the same table ``earlier`` derived from and ``version`` does not."""


def _is_column(v: VariableVersion) -> bool:
    return len(v.parts) == 1 and v.parts[0].startswith("[")


def _column_versions(graph: LineageGraph, key: str, root: str) -> list[VariableVersion]:
    out = []
    for a in graph.ancestors(key):
        v = graph.version(a)
        if v.root == root and _is_column(v):
            out.append(v)
    return out


def _columns_of(graph: LineageGraph, key: str, root: str) -> set[str]:
    """The source columns of ``root`` that ``key`` was transitively derived from: those
    not derived from another column of ``root`` themselves (``s['fee']``, not
    ``s['billed']``), so a formula written out in full reads what its steps read."""
    return {
        v.name
        for v in _column_versions(graph, key, root)
        if not any(u.name != v.name for u in _column_versions(graph, v.key, root))
    }


def narrowed_columns(
    graph: LineageGraph, created: Iterable[str], *, before_cell: int
) -> list[NarrowedColumn]:
    """The columns among ``created`` (version keys a cell wrote) defined again from a
    strict subset of the columns their previous version, written by a cell before
    ``before_cell``, derived from (see the module docstring)."""
    found = []
    for key in created:
        try:
            v = graph.version(key)
        except KeyError:
            continue
        if not _is_column(v) or v.version < 2:
            continue
        history = [h for h in graph.versions(v.name) if h.seq < v.seq]
        if not history or history[-1].cell >= before_cell:
            continue
        earlier = history[-1]
        old = _columns_of(graph, earlier.key, v.root) - {v.name}
        new = _columns_of(graph, v.key, v.root) - {v.name}
        if not old or not new < old:
            continue
        dropped = sorted(c for c in old - new if graph.current(c) is not None)
        if dropped:
            found.append(
                NarrowedColumn(
                    column=v.name,
                    version=v.key,
                    earlier=earlier.key,
                    earlier_cell=earlier.cell,
                    dropped=tuple(dropped),
                )
            )
    return found
