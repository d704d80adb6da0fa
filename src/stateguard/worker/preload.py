"""Loading the task's tables before the first question: the worker's setup cell.

A small model starts every cell by reading the file again (it copies the prompt's
example), which drops the columns it added in earlier turns, and it invents a
variable name for the table each time. `plan_preload` writes one setup cell that
reads each of the first `MAX_TABLES` CSV/TSV files (each at most `MAX_BYTES`) into a
DataFrame named after the file (``data/orders.csv`` → ``orders``); the worker runs it
in the session before the first model call, as an ordinary cell the manager and the
trajectory see, and the system prompt names the loaded frames. If the cell fails,
its error is shown like any other, and the model loads the files itself.
"""

from __future__ import annotations

import builtins
import keyword
import re
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

MAX_TABLES = 5
MAX_BYTES = 200 * 1024 * 1024
SETUP_THOUGHT = "(setup by the worker, before the first question: load the data files)"


class Preload(BaseModel):
    """The setup cell and the frames it loads (variable name -> ``data/...`` path)."""

    model_config = ConfigDict(frozen=True)

    code: str
    frames: dict[str, str]
    numeric: dict[str, tuple[str, ...]] = {}
    """Numeric columns of each frame (as pandas reads the file's first rows)."""
    columns: dict[str, tuple[str, ...]] = {}
    """Every column of each frame, as loaded (the file's header)."""
    sizes: dict[str, int] = {}
    """The size in bytes of each frame's file."""

    @property
    def by_size(self) -> list[str]:
        """The frames, largest file first (the listing's order among equals): the table
        of the facts the questions are about before the lookup tables."""
        order = list(self.frames)
        return sorted(order, key=lambda name: (-self.sizes.get(name, 0), order.index(name)))

    def listing_note(self, path: str) -> str:
        """The line the data listing adds under ``path`` ("" if it is not preloaded)."""
        for name, loaded in self.frames.items():
            if loaded == path:
                return f"  loaded as the DataFrame `{name}`: use it, do not read the file again"
        return ""

    @property
    def example(self) -> str:
        """The prompt's example step: a look at the largest loaded frame (a small model
        copies the example, and takes the frame it names for the data)."""
        return f"  {self.by_size[0]}.head()"

    @property
    def column_example(self) -> str:
        """The prompt's example of a per-row column, built from the largest frame with two
        numeric columns (ids left out); "" when no frame has them."""
        for name in self.by_size:
            columns = self.numeric.get(name, ())
            usable = [c for c in columns if c.isidentifier() and not _ID.search(c.lower())]
            if len(usable) >= 2:
                a, b = usable[:2]
                new = f"{a}_x_{b}"
                return (
                    f', for example `{name}["{new}"] = {name}["{a}"] * {name}["{b}"]`, '
                    f'then `{name}["{new}"].sum()`'
                )
        return ""


_ID = re.compile(r"(^|_)(id|key|code)$")
_SAMPLE_ROWS = 200


def _columns(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every column and the numeric columns of a CSV/TSV file's first rows ((), ():
    unreadable)."""
    import pandas as pd

    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        frame = pd.read_csv(path, sep=sep, nrows=_SAMPLE_ROWS)
    except Exception:  # the setup cell will show the error; no example then
        return (), ()
    every = tuple(str(c) for c in frame.columns)
    return every, tuple(str(c) for c in frame.select_dtypes("number").columns)


_RESERVED = frozenset(
    {"pd", "np", "plt", "sns", "os", "sys", "re", "json", "math", "time", "datetime", "data"}
    | set(dir(builtins))
)
"""Names a table must not shadow: common module aliases, builtins, and ``data`` (the
directory's name in the prompt)."""


def variable_name(path: str, taken: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """A Python name for a file's table: its stem, lower-case, non-word runs as ``_``
    (``df_`` in front when the stem is not a name, or would shadow `_RESERVED`)."""
    stem = re.sub(r"\W+", "_", PurePosixPath(path).stem.lower()).strip("_") or "table"
    usable = stem.isidentifier() and not keyword.iskeyword(stem) and stem not in _RESERVED
    name = stem if usable else f"df_{stem}"
    if not name.isidentifier():
        name = "table"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def plan_preload(data_dir: Path | None) -> Preload | None:
    """The setup cell for the tables of ``data_dir`` (None when it has none)."""
    if data_dir is None or not data_dir.is_dir():
        return None
    tables = [
        p
        for p in sorted(data_dir.rglob("*"))
        if p.is_file() and p.suffix.lower() in (".csv", ".tsv") and p.stat().st_size <= MAX_BYTES
    ][:MAX_TABLES]
    if not tables:
        return None
    frames: dict[str, str] = {}
    numeric: dict[str, tuple[str, ...]] = {}
    columns: dict[str, tuple[str, ...]] = {}
    sizes: dict[str, int] = {}
    lines = ["import pandas as pd", ""]
    for p in tables:
        rel = "data/" + p.relative_to(data_dir).as_posix()
        name = variable_name(rel, set(frames))
        frames[name] = rel
        columns[name], numeric[name] = _columns(p)
        sizes[name] = p.stat().st_size
        sep = ', sep="\\t"' if p.suffix.lower() == ".tsv" else ""
        lines.append(f"{name} = pd.read_csv({rel!r}{sep})")
    lines.append("")
    for name in frames:
        lines.append(f'print("{name}:", {name}.shape[0], "rows x", {name}.shape[1], "columns")')
    return Preload(
        code="\n".join(lines), frames=frames, numeric=numeric, columns=columns, sizes=sizes
    )
