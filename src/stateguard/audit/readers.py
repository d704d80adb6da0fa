"""Reading one file of a data lake into the tables (or the text) it holds.

One reader per format; each yields `Part`s: a table (with its sheet name, table
index or caption) or a text document. A file a reader cannot parse yields one
`Part` carrying the error, so the source map still lists it and says why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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


def _csv(path: Path, sep: str, sample_rows: int | None = None) -> Iterator[Part]:
    if sample_rows is None:
        frame = pd.read_csv(path, sep=sep, low_memory=False, encoding_errors="replace")
        yield Part("table", frame=frame)
        return
    frame = pd.read_csv(path, sep=sep, nrows=sample_rows, encoding_errors="replace")
    yield Part("table", frame=frame, rows=max(count_lines(path) - 1, len(frame)), sampled=True)


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
            return list(_csv(path, "," if suffix == ".csv" else "\t", sample_rows))
        return list(reader(path))
    except Exception as exc:  # a broken file is a fact about the lake, not a crash
        return [Part("unreadable", error=f"{type(exc).__name__}: {exc}")]
