"""Values a ``map`` or ``apply`` lost: a column written from another that is missing
where its source is not.

``df['g'] = df['gender'].map({'M': 1, 'F': 0})`` runs whatever the data holds; a row
whose gender is neither (``'m'``, ``'Other'``) gets NaN, and every mean, sum or count
computed from ``g`` silently leaves it out. The same happens with a function that has
no ``return`` for some values (it returns None). `mapped_columns` reads, from the
code alone, which columns a cell writes as an element-wise ``map``/``apply`` of one
column of the same frame; `lost_values` asks the kernel, in a copy-on-write probe, how
many rows of each are missing while their source is not. A mapping that is meant to
leave gaps is rare in an analysis and easy to make explicit (``.fillna``), so a gap is
worth a word.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import column_assignments, frame_column, probe_rows
from stateguard.kernel import ProbeResult

_ELEMENTWISE = frozenset({"map", "apply"})


class MappedColumn(BaseModel):
    """``frame[column]`` written by ``code``, a map or apply of ``frame[source]``."""

    model_config = ConfigDict(frozen=True)

    frame: str
    column: str
    source: str
    code: str


class LostValues(BaseModel):
    """``lost`` of ``rows`` rows hold a value in the source but none in the column."""

    model_config = ConfigDict(frozen=True)

    mapped: MappedColumn
    lost: int
    rows: int


def mapped_columns(code: str) -> list[MappedColumn]:
    """Each ``frame['c'] = …frame['s'].map(…)…`` (or ``.apply``) assignment of ``code``."""
    out: list[MappedColumn] = []
    for target, node in column_assignments(code):
        for sub in ast.walk(node.value):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in _ELEMENTWISE
                and (source := frame_column(sub.func.value)) is not None
                and source[0] == target[0]
                and source[1] != target[1]
            ):
                out.append(
                    MappedColumn(
                        frame=target[0],
                        column=target[1],
                        source=source[1],
                        code=ast.unparse(node),
                    )
                )
                break
    return list(dict.fromkeys(out))


def lost_values(
    probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0
) -> list[LostValues]:
    """The mapped columns of ``code`` that are missing, now, in rows where their source
    holds a value (one probe; none when the code maps nothing)."""
    mapped = mapped_columns(code)
    if not mapped:
        return []
    return probe_rows(
        probe,
        "lost_values",
        {(m.frame, m.column, m.source): m for m in mapped},
        lambda m, rest: LostValues(mapped=m, lost=int(rest[0]), rows=int(rest[1])),
        timeout,
    )


def describe(found: LostValues) -> str:
    """One sentence naming the assignment and the rows it left empty."""
    m = found.mapped
    return (
        f"`{m.code[:160]}` left {found.lost} of {found.rows} rows of `{m.frame}[{m.column!r}]` "
        f"missing where `{m.frame}[{m.source!r}]` holds a value: the mapping gives nothing "
        "for some values (a dict without them, or a function that returns nothing for them)"
    )
