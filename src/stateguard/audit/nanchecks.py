"""A column that is missing values in every row, just written by a cell.

``df["by_month"] = df.groupby("month")["x"].sum()`` runs: pandas aligns the grouped
result (indexed by month) on the frame's index, matches no row, and fills the column
with NaN. Whatever is computed from it is empty. `nan_columns` asks the kernel, in a
copy-on-write probe, which of the columns a cell wrote (lineage's created versions,
``df['by_month']@v1``) hold only missing values, leaving out those the cell only carried
over from another table's column that was empty already (a filtered copy of a table with
an empty column); `describe` words the note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import probe_json
from stateguard.kernel import ProbeResult, namespace

_COLUMN_VERSION = re.compile(r"^([A-Za-z_]\w*)\[(['\"])(.+?)\2\]@v\d+$")


class NanColumn(BaseModel):
    """A column of ``frame`` whose ``rows`` values are all missing."""

    model_config = ConfigDict(frozen=True)

    frame: str
    column: str
    rows: int


def written_columns(created: Sequence[str]) -> list[tuple[str, str]]:
    """``(frame, column)`` of each created column version (``df['c']@v2``)."""
    out = []
    for version in created:
        m = _COLUMN_VERSION.match(version)
        if m is not None:
            out.append((m.group(1), m.group(3)))
    return list(dict.fromkeys(out))


def nan_columns(
    probe: Callable[..., ProbeResult],
    created: Sequence[str],
    timeout: float = 20.0,
    *,
    reads: Sequence[str] = (),
) -> list[NanColumn]:
    """The columns among ``created`` that hold only missing values now, less those the
    cell carried over from a column that already held only missing values.

    ``reads``: the versions the cell read (lineage's). A column ``t['c']`` the cell
    created (``t = s[s.x > 0]``) is carried when the cell read a column of the same name
    of another table, ``s['c']``, at a version it did not create, and that column holds
    only missing values now: unchanged by the cell, it was empty before it, so the empty
    column is not this cell's doing (an all-empty column of the data file, an earlier
    cell's slip already told)."""
    pairs = written_columns(created)
    if not pairs:
        return []
    made = set(created)
    sources = [p for p in written_columns([r for r in reads if r not in made]) if p not in pairs]
    rows = probe_json(probe, namespace.call("nan_columns", [*pairs, *sources]), timeout)
    try:
        blank = {(str(f), str(c)): int(n) for f, c, n in rows or []}
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return []
    empty_before = {(g, c) for g, c in sources if (g, c) in blank}
    return [
        NanColumn(frame=f, column=c, rows=blank[(f, c)])
        for f, c in pairs
        if (f, c) in blank and not any(d == c and g != f for g, d in empty_before)
    ]


def describe(found: list[NanColumn]) -> str:
    """The note for the model."""
    cols = ", ".join(f"`{f.frame}[{f.column!r}]`" for f in found[:3])
    return (
        f"Note: {cols} holds only missing values (NaN) in all {found[0].rows} rows. A Series "
        "assigned as a column is matched on the index: a grouped result (indexed by the "
        "groups) matches no row. Keep a grouped result as its own variable, or use "
        "`.transform(...)` to get one value per row."
    )
