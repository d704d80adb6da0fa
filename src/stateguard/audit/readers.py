"""Reading one file of a data lake into the tables (or the text) it holds.

One reader per format; each yields `Part`s: a table (with its sheet name, table
index or caption) or a text document. A file a reader cannot parse yields one
`Part` carrying the error, so the source map still lists it and says why.

Published tables are rarely clean, so two things are read as a person would:

- a CSV/TSV with *preamble rows* (a title, a source line, blank lines above the header)
  is read from its header, the first row whose field count the rows below it share
  (`header_row`);
- a text column whose every value is a number written for people (``1,234``,
  ``$5.2M``, ``7K``, ``(1,200)``) becomes numeric (`people_numbers`), in every table
  a reader yields (CSV, HTML, Excel, JSON).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

TEXT_CHARS = 20_000
"""Characters of a text document kept for ranking and preview."""


@dataclass(frozen=True)
class Part:
    """One table or text document inside a file."""

    kind: str
    """"table", "text" or "unreadable"."""
    frame: pd.DataFrame | None = None
    text: str | None = None
    sheet: str | None = None
    table: int | None = None
    caption: str | None = None
    error: str | None = None
    rows: int | None = None
    """Row count of a text document (lines), or of a sampled table; else ``len(frame)``."""
    sampled: bool = False
    """Only the first rows of a large table were read (`rows` counts them all)."""


_HEAD_LINES = 40
"""Lines of a CSV read to find its header row."""
_PEOPLE_NUMBER = re.compile(
    r"^(?P<neg>[-−(])?\s*[$€£¥]?\s*(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"\s*(?P<unit>[KkMmBb]|[Bb]n|[Mm]n)?\s*\)?$"
)
_UNITS = {"k": 1e3, "m": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9}


def header_row(path: Path, sep: str) -> int:
    """Index of the header line of a CSV: the first line that has the field count most
    non-empty lines have (at least two) and that the next line continues (non-empty,
    with the same count). A title or a source line above it (``Reports by State,
    2024``) stands alone or before a blank line, so it is skipped. 0 when no line
    qualifies or the file starts with its header."""
    lines: list[str] = []
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        for _ in range(_HEAD_LINES):
            line = fh.readline()
            if not line:
                break
            lines.append(line)
    counts = [
        len(row) if any(cell.strip() for cell in row) else 0
        for row in csv.reader(lines, delimiter=sep)
    ]
    filled = [c for c in counts if c]
    if not filled:
        return 0
    modal = max(set(filled), key=filled.count)
    if modal < 2:
        return 0
    for i, count in enumerate(counts):
        if count == modal and (i + 1 == len(counts) or counts[i + 1] == modal):
            return i
    return 0


def _for_people(match: re.Match[str]) -> bool:
    """A thousands separator, a currency sign, a unit or parentheses: not plain digits."""
    text = match.group(0)
    return bool(
        match["unit"] or "," in match["num"] or match["neg"] == "(" or re.search("[$€£¥]", text)
    )


def people_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns whose every value is a number written for people, made numeric
    (``1,234`` → 1234, ``$5.2M`` → 5200000, ``7K`` → 7000, ``(1,200)`` → -1200);
    other columns untouched. A column of plain digits pandas left as text stays text
    (an identifier, say)."""
    out = frame
    for name in frame.columns:
        col = frame[name]
        if isinstance(col, pd.DataFrame) or not (
            pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)
        ):
            continue
        values = col.dropna()
        if values.empty or not all(isinstance(v, str) for v in values):
            continue
        parsed = [_PEOPLE_NUMBER.match(v.strip()) for v in values]
        if not all(parsed) or not any(_for_people(m) for m in parsed):  # type: ignore[arg-type]
            continue
        numbers = {}
        for index, m in zip(values.index, parsed, strict=True):
            value = float(m["num"].replace(",", "")) * _UNITS.get((m["unit"] or "").lower(), 1.0)  # type: ignore[index]
            numbers[index] = -value if m["neg"] else value  # type: ignore[index]
        if out is frame:
            out = frame.copy()
        out[name] = pd.Series(numbers, dtype="float64").reindex(frame.index)
    return out


def _csv(path: Path, sep: str, sample_rows: int | None = None) -> Iterator[Part]:
    skip = header_row(path, sep)
    if sample_rows is None:
        frame = pd.read_csv(
            path, sep=sep, skiprows=skip, low_memory=False, encoding_errors="replace"
        )
        yield Part("table", frame=frame)
        return
    frame = pd.read_csv(path, sep=sep, skiprows=skip, nrows=sample_rows, encoding_errors="replace")
    rows = max(count_lines(path) - 1 - skip, len(frame))
    yield Part("table", frame=frame, rows=rows, sampled=True)


def count_lines(path: Path) -> int:
    """Newline-terminated lines of a file (plus a last unterminated one), read in blocks.

    For a CSV this is the row count plus the header unless quoted fields hold newlines.
    """
    n = 0
    last = b"\n"
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def _json(path: Path) -> Iterator[Part]:
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh)
    frame = _json_frame(data)
    if frame is None:
        text = json.dumps(data, ensure_ascii=False)[:TEXT_CHARS]
        yield Part("text", text=text, rows=1)
    else:
        yield Part("table", frame=frame)


def _json_frame(data: Any) -> pd.DataFrame | None:
    """Records (a list of objects, or one key holding them) or columns (dict of lists)."""
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        return pd.json_normalize(data)
    if isinstance(data, dict):
        lists = {k: v for k, v in data.items() if isinstance(v, list)}
        if len(lists) == 1:
            (inner,) = lists.values()
            if inner and all(isinstance(r, dict) for r in inner):
                return pd.json_normalize(inner)
        if lists and len(lists) == len(data) and len({len(v) for v in lists.values()}) == 1:
            return pd.DataFrame(data)
    return None


def _excel(path: Path) -> Iterator[Part]:
    sheets = pd.read_excel(path, sheet_name=None)
    for name, frame in sheets.items():
        yield Part("table", frame=frame, sheet=str(name))


def _html(path: Path) -> Iterator[Part]:
    from io import StringIO

    from lxml import html as lxml_html

    raw = path.read_text(encoding="utf-8", errors="replace")
    if not raw.strip():
        yield Part("text", text="", rows=0)
        return
    doc = lxml_html.fromstring(raw)
    captions = []
    for t in doc.iter("table"):
        cap = t.find("caption")
        captions.append(" ".join(cap.text_content().split()) if cap is not None else None)
    try:
        tables = pd.read_html(StringIO(raw))
    except ValueError:  # "No tables found"
        tables = []
    for i, frame in enumerate(tables):
        caption = captions[i] if len(captions) == len(tables) else None
        yield Part("table", frame=frame, table=i, caption=caption)
    if not tables:
        text = " ".join(doc.text_content().split())
        yield Part("text", text=text[:TEXT_CHARS], rows=1)


def _parquet(path: Path) -> Iterator[Part]:
    import duckdb

    con = duckdb.connect()
    try:
        frame = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).df()
    finally:
        con.close()
    yield Part("table", frame=frame)


def _text(path: Path) -> Iterator[Part]:
    raw = path.read_text(encoding="utf-8", errors="replace")
    yield Part("text", text=raw[:TEXT_CHARS], rows=raw.count("\n") + (not raw.endswith("\n")))


SAMPLED = frozenset({".csv", ".tsv", ".tab"})
"""Formats a large file of which only the first rows are read for the source map."""

READERS: dict[str, Callable[[Path], Iterator[Part]]] = {
    ".csv": lambda p: _csv(p, ","),
    ".tsv": lambda p: _csv(p, "\t"),
    ".tab": lambda p: _csv(p, "\t"),
    ".json": _json,
    ".xlsx": _excel,
    ".xlsm": _excel,
    ".xls": _excel,
    ".html": _html,
    ".htm": _html,
    ".parquet": _parquet,
    ".pq": _parquet,
    ".txt": _text,
    ".md": _text,
    ".markdown": _text,
    ".rst": _text,
}
"""Suffix (lower case) -> reader. Files with other suffixes are not indexed."""


def read_parts(path: Path, *, sample_rows: int | None = None) -> list[Part]:
    """Every table or text in `path`; one "unreadable" part naming the error on failure.

    With `sample_rows`, a CSV/TSV is read only that far (its rows are still counted).
    """
    suffix = path.suffix.lower()
    reader = READERS.get(suffix)
    if reader is None:
        return []
    try:
        if sample_rows is not None and suffix in SAMPLED:
            parts = list(_csv(path, "," if suffix == ".csv" else "\t", sample_rows))
        else:
            parts = list(reader(path))
        return [
            replace(p, frame=people_numbers(p.frame)) if p.frame is not None else p for p in parts
        ]
    except Exception as exc:  # a broken file is a fact about the lake, not a crash
        return [Part("unreadable", error=f"{type(exc).__name__}: {exc}")]
