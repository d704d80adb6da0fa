"""A column that is missing values in every row, just written by a cell.

``df["by_month"] = df.groupby("month")["x"].sum()`` runs: pandas aligns the grouped
result (indexed by month) on the frame's index, matches no row, and fills the column
with NaN. Whatever is computed from it is empty.

``df["fee"] = df[df.s == "a"]["x"] * 0.07`` gives values only in the rows the filter
kept, and NaN elsewhere; a column computed from two such columns (``df["fee"] +
df["flat"]``) whose rows do not overlap is NaN in every row. The note names that cause
when the cell read columns of the same table that hold values in some rows only.

`nan_columns` asks the kernel, in a
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
    partial: tuple[tuple[str, int], ...] = ()
    """Columns of the same table the cell read that hold a value in only some rows:
    ``(column, rows with a value)``."""


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
    found = [
        (f, c)
        for f, c in pairs
        if (f, c) in blank and not any(d == c and g != f for g, d in empty_before)
    ]
    partial = _partial_reads(probe, found, reads, timeout)
    return [
        NanColumn(frame=f, column=c, rows=blank[(f, c)], partial=partial.get((f, c), ()))
        for f, c in found
    ]


def _partial_reads(
    probe: Callable[..., ProbeResult],
    found: Sequence[tuple[str, str]],
    reads: Sequence[str],
    timeout: float,
) -> dict[tuple[str, str], tuple[tuple[str, int], ...]]:
    """For each empty column: the other columns of its table the cell read, when two or
    more of them hold values in some rows only and no row holds a value in all of them
    (one probe; none when the cell read no other column of the table)."""
    read = written_columns(reads)
    asked = [
        ((f, c), (f, others))
        for f, c in found
        if len(others := [d for g, d in read if g == f and d != c]) >= 2
    ]
    if not asked:
        return {}
    rows = probe_json(probe, namespace.call("present_together", [g for _, g in asked]), timeout)
    if not isinstance(rows, list) or len(rows) != len(asked):
        return {}
    out: dict[tuple[str, str], tuple[tuple[str, int], ...]] = {}
    try:
        for (key, _), row in zip(asked, rows, strict=True):
            if row is None:
                continue
            counts, together, total = row
            some = tuple((str(d), int(n)) for d, n in counts if 0 < int(n) < int(total))
            if int(together) == 0 and len(some) >= 2:
                out[key] = some
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return {}
    return out


def describe(found: list[NanColumn]) -> str:
    """The note for the model: the cause the data shows (columns read that hold values
    in some rows only), else the usual one (a grouped result assigned as a column)."""
    cols = ", ".join(f"`{f.frame}[{f.column!r}]`" for f in found[:3])
    head = f"Note: {cols} holds only missing values (NaN) in all {found[0].rows} rows."
    partial = next((f for f in found if f.partial), None)
    if partial is not None:
        sources = " and ".join(
            f"`{partial.frame}[{c!r}]` (values in {n} of {partial.rows} rows)"
            for c, n in partial.partial[:3]
        )
        return (
            f"{head} It is computed from {sources}: a row where any of them is missing "
            "gives NaN. A column assigned from selected rows (`df[mask]['x'] * k`) is NaN "
            "in every other row. Give the other rows their value (for example "
            "`.fillna(0)`), or compute each row's value with `np.where(mask, a, b)`."
        )
    return (
        f"{head} A Series "
        "assigned as a column is matched on the index: a grouped result (indexed by the "
        "groups) matches no row. Keep a grouped result as its own variable, or use "
        "`.transform(...)` to get one value per row."
    )
