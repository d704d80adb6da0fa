"""The source map: every table and document of a data lake, with evidence about it.

`index_lake(root)` walks a folder tree and records, per source (a CSV file, one
sheet of a workbook, one table of an HTML page, a text file…), its location,
schema, row count and a content signature. The map is a frozen pydantic model:
it is saved with a run and can be compared across runs (a changed signature
means the data changed under the analysis).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from stateguard.audit.errors import SourceMapError
from stateguard.audit.readers import READERS, SAMPLED, Part, read_parts

PREVIEW_ROWS = 5
VALUE_SAMPLE = 30
"""Distinct short string values kept per text column (they make sources findable)."""

SourceId = str
"""``relative/path`` for a single-table file, ``path#sheet`` or ``path#table3`` otherwise."""


class SourceLocation(BaseModel):
    """Where a source is: the file, and the sheet or table inside it."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Relative to the lake root, with forward slashes."""
    sheet: str | None = None
    table: int | None = None
    caption: str | None = None


class ColumnInfo(BaseModel):
    """One column of a table source."""

    model_config = ConfigDict(frozen=True)

    name: str
    dtype: str
    nulls: int = 0
    sample: tuple[str, ...] = ()
    """Distinct values of a text column (at most `VALUE_SAMPLE`, each at most 40 chars)."""


class Source(BaseModel):
    """One table or document of the lake."""

    model_config = ConfigDict(frozen=True)

    id: SourceId
    kind: Literal["table", "text", "unreadable", "other"]
    """"other": a file of a format the map does not read (PDF, HDF5, images…), listed
    by path, size and signature so it can still be discovered by its name."""
    location: SourceLocation
    columns: tuple[ColumnInfo, ...] = ()
    rows: int | None = None
    signature: str = ""
    """SHA-256 of the content (table values and labels, or the text)."""
    preview: str = ""
    """The first rows of a table, or the start of a text."""
    text: str = ""
    """For text sources: the (capped) content used for ranking."""
    error: str | None = None
    bytes: int = 0
    """Size of the file holding the source."""
    sampled: bool = False
    """Schema and samples come from the first rows only (a large CSV/TSV)."""


class SourceMap(BaseModel):
    """All sources of a lake, in path order."""

    model_config = ConfigDict(frozen=True)

    root: str
    sources: tuple[Source, ...]

    def get(self, source_id: SourceId) -> Source:
        """The source with this id; `SourceMapError` naming close ids otherwise."""
        for s in self.sources:
            if s.id == source_id:
                return s
        near = [s.id for s in self.sources if source_id.split("#")[0] in s.id][:5]
        raise SourceMapError(f"no source {source_id!r} in {self.root}; similar: {near}")

    def of_path(self, path: str) -> tuple[Source, ...]:
        """The sources of one file (relative path)."""
        return tuple(s for s in self.sources if s.location.path == path)

    @property
    def paths(self) -> tuple[str, ...]:
        """Indexed files, each once, in order."""
        return tuple(dict.fromkeys(s.location.path for s in self.sources))

    def save(self, path: Path) -> None:
        """Write the map as JSON."""
        path.write_text(self.model_dump_json(indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> SourceMap:
        """Read a map written by `save`."""
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def index_lake(
    root: Path | str,
    *,
    max_bytes: int = 512 * 2**20,
    sample_bytes: int = 32 * 2**20,
    sample_rows: int = 10_000,
) -> SourceMap:
    """Index every readable file under `root` (hidden files and folders skipped).

    CSV/TSV files larger than `sample_bytes` are read for their first
    `sample_rows` rows only (rows are still counted; the signature is then the
    file's SHA-256). Other files larger than `max_bytes` are listed as
    unreadable with the reason, rather than loaded. Files of other formats are
    listed as "other" (path, size, and the SHA-256 of those up to `sample_bytes`).
    """
    base = Path(root)
    if not base.is_dir():
        raise SourceMapError(f"data lake {base} is not a directory")
    sources: list[Source] = []
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        rel = path.relative_to(base).as_posix()
        if any(part.startswith(".") for part in Path(rel).parts):
            continue
        size = path.stat().st_size
        if path.suffix.lower() not in READERS:
            signature = file_signature(path) if size <= sample_bytes else ""
            sources.append(
                Source(
                    id=rel,
                    kind="other",
                    location=SourceLocation(path=rel),
                    signature=signature,
                    bytes=size,
                )
            )
            continue
        sampled = size > sample_bytes and path.suffix.lower() in SAMPLED
        if sampled:
            parts = read_parts(path, sample_rows=sample_rows)
        elif size > max_bytes:
            parts = [Part("unreadable", error=f"{size} bytes exceeds the {max_bytes} cap")]
        else:
            parts = read_parts(path)
        single = len(parts) == 1
        for part in parts:
            source = _source(rel, part, single, size)
            if part.sampled:
                source = source.model_copy(update={"signature": file_signature(path)})
            sources.append(source)
    return SourceMap(root=str(base), sources=tuple(sources))


def _source(rel: str, part: Part, single: bool, size: int) -> Source:
    location = SourceLocation(path=rel, sheet=part.sheet, table=part.table, caption=part.caption)
    if single:
        sid = rel
    elif part.sheet is not None:
        sid = f"{rel}#{part.sheet}"
    else:
        sid = f"{rel}#table{part.table}"
    if part.kind == "table" and part.frame is not None:
        frame = part.frame
        return Source(
            id=sid,
            kind="table",
            location=location,
            columns=tuple(_column(frame, c) for c in frame.columns),
            rows=part.rows if part.sampled and part.rows is not None else len(frame),
            sampled=part.sampled,
            signature=table_signature(frame),
            preview=frame.head(PREVIEW_ROWS).to_string(max_colwidth=40)[:2000],
            bytes=size,
        )
    if part.kind == "text":
        text = part.text or ""
        return Source(
            id=sid,
            kind="text",
            location=location,
            rows=part.rows,
            signature=hashlib.sha256(text.encode()).hexdigest(),
            preview=text[:500],
            text=text,
            bytes=size,
        )
    return Source(id=sid, kind="unreadable", location=location, error=part.error, bytes=size)


def _column(frame: pd.DataFrame, name: object) -> ColumnInfo:
    col = frame[name]
    if isinstance(col, pd.DataFrame):  # duplicated column label
        col = col.iloc[:, 0]
    sample: tuple[str, ...] = ()
    if not pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_datetime64_any_dtype(col):
        values = col.dropna().astype(str)
        short = values[values.str.len() <= 40].unique()[:VALUE_SAMPLE]
        sample = tuple(str(v) for v in short)
    return ColumnInfo(
        name=str(name), dtype=str(col.dtype), nulls=int(col.isna().sum()), sample=sample
    )


def file_signature(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def table_signature(frame: pd.DataFrame) -> str:
    """SHA-256 over column labels, dtypes and every cell (row order matters)."""
    h = hashlib.sha256()
    h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    try:
        h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    except TypeError:  # unhashable cells (lists from JSON): hash their text
        h.update(frame.astype(str).to_csv(index=False).encode())
    return h.hexdigest()
