"""A printed column where one number was meant: a pandas Series after a label.

``print(f"net_revenue: {total}")`` with ``total`` a Series prints the label, then the
Series' first row (``net_revenue: 0    33137.10``), more rows and a ``dtype`` footer. The
cell runs, and a small model then reads the first index (``0``) as the value. This is
a silent error execution can show: `labelled_series` finds such blocks in what a cell
printed, so the worker can say so and sample another cell instead of taking an
answer from it.

A block is the run of non-blank lines that ends with a pandas footer
(``Length: 1200, dtype: float64``, ``Name: x, dtype: int64`` or ``dtype: object``) and
whose first line is text, then ``:`` or ``=``, then an index and a value separated by
two or more spaces. A numpy array of numbers after a label (``share: [ 0.02  0.09 …]``)
counts too. A Series printed on its own (no label before its first row) is not
reported: that is a table the model asked to see.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

_ARRAY_START = re.compile(r"^(?P<label>.*?\S)\s*[:=]\s*\[\s*(?P<first>[-+]?\d[\d.e+-]*)\s+[-+]?\d")
"""A numpy array printed after a label: ``share: [ 2.0e-02  8.9e-04 ...``."""
_FOOTER = re.compile(r"^(?:Name: .*?, )?(?:Length: (?P<length>\d+), )?dtype: \w+$")
"""A Series repr's last line: ``Name: x, Length: 1297, dtype: float64`` (pandas writes the
name first), ``Length: 1297, dtype: float64`` or ``dtype: int64``."""
_ROW = re.compile(r"^(?P<index>\S(?:.*?\S)?)\s{2,}(?P<value>\S+)$")
"""One row of a Series repr: its index label, two or more spaces, its value."""
_LABELLED_ROW = re.compile(r"^(?P<label>.*?\S)\s*[:=]\s*(?P<index>[^\s:=]+)\s{2,}\S+$")


class LabelledSeries(BaseModel):
    """A Series printed where a label announced one value."""

    model_config = ConfigDict(frozen=True)

    label: str
    """The text before ``:``/``=`` on the block's first line, after its last comma, e.g.
    ``net_revenue`` in ``orders: 1200, net_revenue: 0    33137.10``."""
    first_index: str
    """The index printed first after the label (``0``): not a value ("" for an array)."""
    length: int
    """The Series' length (from the ``Length:`` footer, else the rows printed)."""


def _arrays(lines: list[str]) -> list[LabelledSeries]:
    found = []
    for i, line in enumerate(lines):
        m = _ARRAY_START.match(line.strip())
        if m is None:
            continue
        end = i
        while "]" not in lines[end] and end + 1 < len(lines):
            end += 1
        body = " ".join(lines[i : end + 1]).split("[", 1)[1].split("]", 1)[0]
        label = re.split(r"[,;]\s*", m.group("label"))[-1].strip()
        found.append(LabelledSeries(label=label, first_index="", length=len(body.split())))
    return found


def labelled_series(stdout: str) -> list[LabelledSeries]:
    """Every Series (or numpy array of numbers) printed after a label in ``stdout``."""
    lines = stdout.splitlines()
    found: list[LabelledSeries] = _arrays(lines)
    for end, line in enumerate(lines):
        footer = _FOOTER.match(line.strip())
        if footer is None:
            continue
        start = end
        while start > 0 and lines[start - 1].strip():
            start -= 1
        row = _LABELLED_ROW.match(lines[start].strip())
        if row is None or start == end:
            continue
        rows = sum(1 for x in lines[start:end] if x.strip() and x.strip() != "...")
        length = int(footer.group("length")) if footer.group("length") else rows
        if length < 2:
            continue
        found.append(
            LabelledSeries(
                label=re.split(r"[,;]\s*", row.group("label"))[-1].strip(),
                first_index=row.group("index"),
                length=length,
            )
        )
    return found


class ShownSeries(BaseModel):
    """A pandas Series shown on its own, as its repr reads."""

    model_config = ConfigDict(frozen=True)

    rows: tuple[tuple[str, str], ...]
    """The rows shown, as (index label, value) text; a long Series shows its first and last
    rows only."""
    length: int
    """The Series' length (from the ``Length:`` footer, else the rows shown)."""


def shown_series(text: str) -> ShownSeries | None:
    """``text`` read as the repr of one pandas Series (a cell's result, or all it printed):
    an optional line naming the index (a first line shorter than the rows, whose values
    pandas right-aligns), rows of an index and a value, ``...`` where rows are left out,
    then the ``dtype`` footer. None for anything else (a scalar, a DataFrame, a Series
    after other text)."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    if len(lines) < 3:
        return None
    footer = _FOOTER.match(lines[-1].strip())
    if footer is None:
        return None
    body = lines[:-1]
    widths = [len(line) for line in body[1:] if line.strip() != "..."]
    if widths and len(body[0]) < min(widths):
        body = body[1:]  # the index's names: pandas right-aligns the values past them
    rows = []
    for line in body:
        if line.strip() == "...":
            continue
        row = _ROW.match(line.strip())
        if row is None:
            return None
        rows.append((row.group("index"), row.group("value")))
    length = int(footer.group("length")) if footer.group("length") else len(rows)
    return ShownSeries(rows=tuple(rows), length=length) if rows else None


def describe(found: list[LabelledSeries]) -> str:
    """The note for the model, naming each label and what was printed instead of a value."""
    parts = [
        f"`{s.label}` is followed by a whole Series of {s.length} values (its first row "
        f"index, {s.first_index}, is not a value)"
        if s.first_index
        else f"`{s.label}` is followed by an array of {s.length} values"
        for s in found[:3]
    ]
    return (
        "Note: the output printed a column where one value was meant: "
        + "; ".join(parts)
        + ". An expression like `a * b * (1 - c).sum()` sums only the last factor: store the"
        " per-row values as a column first, then aggregate that column (for example"
        " `.sum()`), and print the single number."
    )
