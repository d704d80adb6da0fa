"""Helpers that act on the user namespace from inside the kernel, in one module.

The host never sends ad-hoc snippets: it sends one call into this module (built by
`call`), and the function prints its JSON result on stdout. Standard library only;
the kernel imports this module on first use.

* `delete` — remove names; prints the names that existed.
* `checkpoint` — pickle the values of names into a file; prints the names saved
  (values that cannot be pickled are skipped).
* `restore` — rebind names from a checkpoint file; run it as a *tracked* cell so
  lineage records the new bindings.
* `describe` — type and shape of names (what the error-context note shows); run it
  in a probe so the namespace is untouched.
* `columns` — the columns of the DataFrames among names (for a KeyError's note); run it
  in a probe.
* `nan_columns` — which (frame, column) pairs are entirely missing values; run it in a
  probe.
* `lost_values` — for (frame, column, source) triples, how many rows hold a value in
  ``source`` but none in ``column``; run it in a probe.
* `shown_keys` — for the last value a cell showed (``_``), if a table or Series, how
  many of its rows repeat a value of each column (other labels alike) and of a one-level
  named index; run it in a probe.
* `column_kinds` — whether each (frame, column) pair holds numbers, text or something
  else; run it in a probe.
* `absent_values` — which (frame, column, value) equality filters match no row, with
  the column's values and the other frames' columns that hold the value; run it in a
  probe.
* `indicator_values` — for (frame, column, source) triples where ``column`` is a 0/1
  mark of a few ``source`` categories, which categories it marks 1 and which 0; run it
  in a probe.
* `fractional_columns` — which (frame, column) pairs are numeric with a non-whole value;
  run it in a probe.
* `named_values` — the values of text columns that a text (a question) names verbatim,
  as whole words, with their frame and column; run it in a probe.
* `results_differ` — for pairs of expressions (a step's result as written and as the
  question reads it), whether their values differ; run it in a probe.
* `values_held` — for each of some values, a text column of the namespace's DataFrames
  that holds it (case aside), if any; run it in a probe.
* `readings_differ` — for pairs of boolean expressions (a comparison as the code wrote
  it, and as the question reads it), the rows each keeps and the rows where they differ;
  run it in a probe.
* `unmatched_keys` — for (expression, keys) pairs, the keys the DataFrame the expression
  evaluates to does not hold as columns (a rename that renamed nothing); run it in a
  probe.
* `flag_columns` — which (frame, column) pairs hold only 0 and 1 (or False and True); run
  it in a probe.
* `word_columns` — which (frame, column) pairs hold words (text that does not start with
  a digit); run it in a probe.
* `column_holders` — the DataFrames outside some names that hold a column, with the
  columns they share with those names' DataFrames and which of those are unique in them
  (for a KeyError's note); run it in a probe.
* `constant_columns` — which (frame, column) pairs hold one value in every row; run it in
  a probe.
* `date_texts` — which (frame, column) pairs hold dates written as text, with the first
  one (for the note on ``.dt`` used on text); run it in a probe.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

_MODULE = "stateguard.kernel.namespace"


def call(function: str, *args: Any) -> str:
    """The one-line cell that runs ``function(*args)`` of this module in the kernel."""
    rendered = ", ".join(repr(a) for a in args)
    return f"__import__({_MODULE!r}, fromlist=[{function!r}]).{function}({rendered})"


def _user_ns() -> dict[str, Any]:
    from IPython import get_ipython  # the kernel's shell, present inside any kernel

    return get_ipython().user_ns


def delete(names: Sequence[str]) -> None:
    """Remove ``names``; print the list of those that existed."""
    ns = _user_ns()
    print(json.dumps([n for n in names if ns.pop(n, ns) is not ns]))


def checkpoint(path: str, names: Sequence[str]) -> None:
    """Pickle the values of ``names`` into ``path``; print the sorted names saved."""
    ns = _user_ns()
    saved: dict[str, bytes] = {}
    for name in names:
        if name in ns:
            try:
                saved[name] = pickle.dumps(ns[name])
            except Exception:
                continue
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)  # created by the kernel's user
    with open(path, "wb") as fh:
        pickle.dump(saved, fh)
    print(json.dumps(sorted(saved)))


def restore(path: str, names: Sequence[str]) -> None:
    """Rebind each of ``names`` saved in ``path`` (others stay as they are)."""
    ns = _user_ns()
    with open(path, "rb") as fh:
        saved = pickle.load(fh)
    for name, blob in saved.items():
        if name in names:
            ns[name] = pickle.loads(blob)


def _describe(value: Any) -> str:
    """``type shape=… dtype=…`` for an array or a table, ``type len=…`` for a container,
    and ``type value`` for one value: a numpy scalar (``float64 8345.12``) as a Python
    number, not by its empty shape."""
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if shape is not None and tuple(shape) != ():
        dtype = f" dtype={value.dtype}" if hasattr(value, "dtype") else ""
        return f"{kind} shape={tuple(shape)}{dtype}"
    if isinstance(value, list | tuple | dict | set):
        return f"{kind} len={len(value)}"
    text = str(value) if type(value).__module__ == "numpy" else repr(value)
    return f"{kind} {text[:60]}"


def describe(names: Sequence[str]) -> None:
    """Print ``{name: "type shape/len/repr"}`` for each of ``names`` that exists."""
    ns = _user_ns()
    print(json.dumps({n: _describe(ns[n]) for n in names if n in ns}))


def describe_expression(source: str) -> None:
    """Print the description of what ``source`` (one expression of the cell that failed)
    evaluates to, with its index labels when it is a Series; ``null`` if it fails. Run in
    a probe: the expression is the cell's own code, and the fork is thrown away."""
    try:
        value = eval(compile(source, "<expression>", "eval"), _user_ns())
    except Exception:
        print("null")
        return
    text = _describe(value)
    index = getattr(value, "index", None)
    if type(value).__name__ == "Series" and index is not None:
        labels = [str(v) for v in list(index[:_MAX_SHOWN_VALUES])]
        name = getattr(index, "name", None)
        text += f" indexed by {name or 'position'}: {', '.join(labels)}"
        if len(index) > _MAX_SHOWN_VALUES:
            text += ", …"
    print(json.dumps(text))


_MAX_SHOWN_VALUES = 8
_MAX_FRAMES = 20


def _frames(ns: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in ns.items():
        if name.startswith("_") or type(value).__name__ != "DataFrame":
            continue
        if type(value).__module__.startswith("pandas"):
            out[name] = value
        if len(out) >= _MAX_FRAMES:
            break
    return out


def _tables(keys: Sequence[Sequence[Any]]) -> Iterator[tuple[Any, Sequence[Any]]]:
    """``(frame, key)`` for each key ``(frame name, column, more columns…)`` whose frame is
    a pandas DataFrame of the namespace holding every column the key names."""
    ns = _user_ns()
    frames = _frames({k[0]: ns[k[0]] for k in keys if k[0] in ns})
    for key in keys:
        table = frames.get(key[0])
        if table is not None and all(c in table.columns for c in key[1:]):
            yield table, key


def absent_values(checks: Sequence[tuple[str, str, Any]]) -> None:
    """Print, for each ``(frame, column, value)`` whose column exists and holds no cell
    equal to ``value``: the column's most frequent values, whether the value is there as
    text, and ``frame['column']`` of other frames that hold it."""
    ns = _user_ns()
    frames = _frames(ns)
    found = []
    for frame, column, value in checks:
        table = frames.get(frame)
        if table is None or column not in getattr(table, "columns", ()):
            continue
        series = table[column]
        try:
            if bool((series == value).any()):
                continue
            as_text = bool((series.astype(str) == str(value)).any())
            common = [str(v) for v in series.value_counts().index[:_MAX_SHOWN_VALUES]]
        except Exception:  # an exotic column: say nothing rather than guess
            continue
        elsewhere = []
        for other, data in frames.items() if isinstance(value, str) else ():
            for col in data.columns:
                if (other, col) == (frame, column) or data[col].dtype.kind not in "OSUb":
                    continue
                try:
                    if bool((data[col] == value).any()):
                        elsewhere.append(f"{other}[{str(col)!r}]")
                except Exception:
                    continue
        found.append(
            {
                "frame": frame,
                "column": str(column),
                "value": repr(value),
                "distinct": int(series.nunique()),
                "common": common,
                "as_text": as_text,
                "elsewhere": elsewhere[:3],
            }
        )
    print(json.dumps(found))


_MAX_COLUMNS = 40


def columns(names: Sequence[str]) -> None:
    """Print ``{name: [column, ...]}`` for each of ``names`` bound to a pandas DataFrame."""
    ns = _user_ns()
    frames = _frames({n: ns[n] for n in names if n in ns})
    print(json.dumps({n: [str(c) for c in f.columns[:_MAX_COLUMNS]] for n, f in frames.items()}))


def nan_columns(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column, rows], ...]`` for each pair whose column exists, has rows,
    and holds only missing values."""
    out = []
    for table, (frame, column) in _tables(pairs):
        if len(table) == 0:
            continue
        try:
            if bool(table[column].isna().all()):
                out.append([frame, column, len(table)])
        except Exception:
            continue
    print(json.dumps(out))


def present_together(groups: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Print ``[[[column, present], ...], together, rows]`` for each ``(frame, columns)``,
    in order (``null`` when the frame does not hold those columns): how many rows of each
    column hold a value (not missing), and how many rows hold one in every column."""
    ns = _user_ns()
    frames = _frames({f: ns[f] for f, _ in groups if f in ns})
    out = []
    for frame, columns in groups:
        table = frames.get(frame)
        try:
            present = table[list(columns)].notna()
            counts = [[str(c), int(present[c].sum())] for c in columns]
            out.append([counts, int(present.all(axis=1).sum()), len(table)])
        except Exception:
            out.append(None)
    print(json.dumps(out))


def lost_values(triples: Sequence[tuple[str, str, str]]) -> None:
    """Print ``[[frame, column, source, lost, rows], ...]`` for each triple whose columns
    exist and where ``lost`` > 0 rows are missing in ``column`` but not in ``source``."""
    out = []
    for table, (frame, column, source) in _tables(triples):
        try:
            lost = int((table[column].isna() & table[source].notna()).sum())
        except Exception:
            continue
        if lost > 0:
            out.append([frame, str(column), str(source), lost, len(table)])
    print(json.dumps(out))


def shown_keys() -> None:
    """Print ``{"rows": n, "repeats": {name: count}}`` for the last shown value ``_`` when
    it is a pandas DataFrame or Series, else ``null``. Per column of a table (first
    `_MAX_COLUMNS`): the rows that repeat an earlier row's value of that column and of
    every other column that is not numeric (a table per item *and* gender repeats items
    by design). Per index, when it has one level and a name: the rows that repeat a key."""
    value = _user_ns().get("_")
    if type(value).__name__ not in ("DataFrame", "Series") or not type(value).__module__.startswith(
        "pandas"
    ):
        print("null")
        return
    repeats: dict[str, int] = {}
    try:
        if type(value).__name__ == "DataFrame" and value.columns.is_unique:
            columns = list(value.columns)[:_MAX_COLUMNS]
            labels = [c for c in columns if value[c].dtype.kind not in "iufc"]
            for column in columns:
                subset = [column, *(c for c in labels if c != column)]
                repeats[str(column)] = int(value.duplicated(subset=subset).sum())
        if value.index.nlevels == 1 and value.index.name is not None:
            repeats.setdefault(str(value.index.name), int(value.index.duplicated().sum()))
    except Exception:
        print("null")
        return
    print(json.dumps({"rows": len(value), "repeats": repeats}))


def column_kinds(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column, kind], ...]`` for each pair whose column exists: ``number``
    (a numeric dtype), ``text`` (its first non-missing values are all strings) or ``other``."""
    out = []
    for table, (frame, column) in _tables(pairs):
        try:
            series = table[column]
            if getattr(series, "ndim", 1) != 1:
                continue
            kind = "other"
            if series.dtype.kind in "iuf":
                kind = "number"
            elif series.dtype.kind in "OSU" or str(series.dtype) == "string":
                head = series.dropna().head(20).tolist()
                if head and all(isinstance(v, str) for v in head):
                    kind = "text"
            out.append([frame, str(column), kind])
        except Exception:
            continue
    print(json.dumps(out))


_MAX_CATEGORIES = 12


def indicator_values(triples: Sequence[tuple[str, str, str]]) -> None:
    """Print ``[[frame, column, source, ones, zeros], ...]`` for each triple whose
    ``column`` holds only 0 and 1 (or booleans) where ``source`` holds a value, and whose
    ``source`` holds at most `_MAX_CATEGORIES` values, each mapped to one of them: the
    source values (as text) mapped to 1 and those mapped to 0."""
    out = []
    for table, (frame, column, source) in _tables(triples):
        try:
            pairs = table[[source, column]].dropna().drop_duplicates()
            if len(pairs) > _MAX_CATEGORIES or pairs[source].duplicated().any():
                continue
            marks = pairs[column].tolist()
            if not marks or any(isinstance(m, str) or m not in (0, 1) for m in marks):
                continue
            ones = [str(s) for s, m in zip(pairs[source], marks, strict=True) if m == 1]
            zeros = [str(s) for s, m in zip(pairs[source], marks, strict=True) if m == 0]
        except Exception:
            continue
        out.append([frame, str(column), str(source), ones, zeros])
    print(json.dumps(out))


def fractional_columns(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column], ...]`` for each pair whose column is numeric and holds a
    value with a fractional part (it cannot be a count of things)."""
    out = []
    for table, (frame, column) in _tables(pairs):
        try:
            series = table[column]
            if getattr(series, "ndim", 1) != 1 or series.dtype.kind != "f":
                continue
            values = series.dropna()
            if bool((values != values.round()).any()):
                out.append([frame, str(column)])
        except Exception:
            continue
    print(json.dumps(out))


def _kept(value: Any) -> tuple[int, Any] | None:
    """(rows kept, the mask) of a one-dimensional boolean Series or array; None otherwise.

    A single truth value is no mask: two readings of ``x != v`` always differ on one
    value, whatever the data holds (a loop variable's last value, one group's length),
    so it cannot corroborate a reading of the question."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind == "b" and getattr(value, "ndim", 0) == 1:
        return int(value.sum()), value
    return None


def readings_differ(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[kept_as_written, kept_as_read, differing] | null, ...]``, one per pair of
    boolean expressions (the cell's own comparison, and the same comparison as the
    question reads it): ``null`` when either fails or is not a mask (a single truth value
    is none, see `_kept`), or the two masks are not aligned. Run in a probe: the
    expressions are the cell's own code."""
    ns = _user_ns()
    out: list[list[int] | None] = []
    for written, read in pairs:
        try:
            a = _kept(eval(compile(written, "<written>", "eval"), ns))
            b = _kept(eval(compile(read, "<read>", "eval"), ns))
            if a is None or b is None:
                out.append(None)
                continue
            differ = int((a[1] != b[1]).sum()) if len(a[1]) == len(b[1]) else None
            out.append(None if differ is None else [a[0], b[0], differ])
        except Exception:
            out.append(None)
    print(json.dumps(out))


_MAX_NAMED = 20
_MAX_DISTINCT = 5000


def _text_columns() -> Iterator[tuple[str, str, list[str]]]:
    """``(frame, column, distinct values as text)`` of every one-dimensional text column
    of the namespace's DataFrames (at most 5000 values read per column); a column that
    cannot be read is skipped."""
    for frame, table in _frames(_user_ns()).items():
        for column in table.columns:
            try:
                col = table[column]
                dtype = getattr(col, "dtype", None)
                text_kind = getattr(dtype, "kind", None) in ("O", "S", "U", "T")
                if getattr(col, "ndim", 2) != 1 or not (
                    text_kind or type(dtype).__name__ == "StringDtype"
                ):
                    continue
                values = [str(v) for v in col.dropna().astype(str).unique()[:_MAX_DISTINCT]]
            except Exception:
                continue
            yield frame, str(column), values


def named_values(text: str) -> None:
    """Print ``[[frame, column, value], ...]``: the values of the text columns of the
    namespace's DataFrames that ``text`` contains verbatim as whole words (three
    characters or more, case as written; at most 5000 distinct values read per column).
    The match is on the data's own values, not on any reading of the words."""
    import re

    found: list[list[str]] = []
    for frame, column, values in _text_columns():
        for value in values:
            if len(value) >= 3 and re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text):
                found.append([frame, column, value])
        if len(found) >= _MAX_NAMED:
            break
    print(json.dumps(found))


def _same_value(a: Any, b: Any) -> bool:
    equals = getattr(a, "equals", None)
    if callable(equals) and type(a) is type(b):
        return bool(equals(b))
    try:
        same = a == b
        if isinstance(same, bool):
            return same or (a != a and b != b)  # two NaN are the same missing value
    except Exception:
        pass
    return repr(a) == repr(b)


def results_differ(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[true | false | null, ...]``: for each pair of expressions, whether their
    values differ (``null`` when either fails). Run in a probe: both are the cell's own
    result expression, one rewritten; the fork is thrown away."""
    ns = _user_ns()
    out: list[bool | None] = []
    for written, read in pairs:
        try:
            a = eval(compile(written, "<written>", "eval"), ns)
            b = eval(compile(read, "<read>", "eval"), ns)
            out.append(not _same_value(a, b))
        except Exception:
            out.append(None)
    print(json.dumps(out))


def series_order(names: Sequence[str]) -> None:
    """Print ``{name: [length, ordered]}`` for each of ``names`` that is a pandas Series:
    its number of values, and whether they are in order (non-decreasing or
    non-increasing, missing values aside; a Series that cannot be compared counts as
    ordered)."""
    ns = _user_ns()
    out: dict[str, list[Any]] = {}
    for name in names:
        value = ns.get(name)
        if type(value).__name__ != "Series" or not type(value).__module__.startswith("pandas"):
            continue
        try:
            kept = value.dropna()
            ordered = bool(kept.is_monotonic_increasing or kept.is_monotonic_decreasing)
        except Exception:
            ordered = True
        out[name] = [len(value), ordered]
    print(json.dumps(out))


def values_held(values: Sequence[str]) -> None:
    """Print ``{"columns": n, "held": {value: [frame, column] | null}}``: the number of text
    columns read, and for each of ``values`` the first text column (of the namespace's
    DataFrames) holding it, case aside; ``null`` when none does (at most 5000 distinct
    values read per column)."""
    wanted = {v.strip().lower(): v for v in values}
    found: dict[str, list[str] | None] = dict.fromkeys(values)
    columns = 0
    for frame, column, values in _text_columns():
        columns += 1
        for value in values:
            key = value.strip().lower()
            if key in wanted and found[wanted[key]] is None:
                found[wanted[key]] = [frame, column]
    print(json.dumps({"columns": columns, "held": found}))


def unmatched_keys(items: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Print ``[[i, [missing key, ...], [column, ...]], ...]``: for each ``(expression,
    keys)`` whose expression evaluates to a pandas DataFrame lacking some of the keys as
    columns, its position, those keys and the frame's first columns. Run in a probe: the
    expression is a table a cell renamed, evaluated again; the fork is thrown away."""
    ns = _user_ns()
    out = []
    for i, (source, keys) in enumerate(items):
        try:
            value = eval(compile(source, "<table>", "eval"), ns)
        except Exception:
            continue
        if type(value).__name__ != "DataFrame" or not type(value).__module__.startswith("pandas"):
            continue
        held = {str(c) for c in value.columns}
        missing = [k for k in keys if k not in held]
        if missing:
            out.append([i, missing, [str(c) for c in value.columns[:_MAX_COLUMNS]]])
    print(json.dumps(out))


def column_holders(key: str, names: Sequence[str]) -> None:
    """Print ``[[frame, [shared column, ...], [unique shared column, ...], [column, ...],
    [shared column unique on the line, ...]], ...]``: the namespace's DataFrames outside
    ``names`` that hold ``key`` as a column, each with the columns it shares with the
    DataFrames among ``names``, those of them whose values are unique in it (a lookup key:
    a left join on it keeps every row), its columns, and the shared columns whose values
    are unique in a DataFrame among ``names`` (the line's frame is the lookup table, the
    holder the rows: the join goes the other way). For a KeyError's note, and a column a
    cell filled with one made-up value; run it in a probe."""
    ns = _user_ns()
    frames = _frames(ns)
    on_line = [f for n, f in frames.items() if n in names]
    out = []
    for name, frame in frames.items():
        held = [str(c) for c in frame.columns]
        if name in names or key not in held:
            continue
        shared = [c for c in held if c != key and any(c in map(str, f.columns) for f in on_line)]
        unique = [c for c in shared[:5] if _is_key(frame, c)]
        keys = [c for c in shared[:5] if any(_is_key(f, c) for f in on_line if c in f.columns)]
        out.append([name, shared[:5], unique, held[:_MAX_COLUMNS], keys])
    print(json.dumps(out[:3]))


def _is_key(frame: Any, column: str) -> bool:
    """Whether ``frame[column]`` is one column whose values are all present and unique."""
    try:
        series = frame[column]
        return bool(getattr(series, "ndim", 1) == 1 and series.notna().all() and series.is_unique)
    except Exception:
        return False


def constant_columns(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column, repr of its value], ...]`` for each pair whose column holds
    one value in every row of a table of two rows or more (none missing); run it in a
    probe."""
    out = []
    for table, (frame, column) in _tables(pairs):
        try:
            series = table[column]
            if getattr(series, "ndim", 1) != 1 or len(series) < 2 or series.isna().any():
                continue
            if series.nunique() == 1:
                out.append([frame, str(column), repr(series.iloc[0])[:40]])
        except Exception:
            continue
    print(json.dumps(out))


def flag_columns(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column], ...]`` for each pair whose column holds only two values,
    0 and 1 or False and True (missing values aside); run it in a probe."""
    out = []
    for table, (frame, column) in _tables(pairs):
        try:
            series = table[column]
            if getattr(series, "ndim", 1) != 1 or series.dtype.kind not in "biuf":
                continue
            held = {float(v) for v in series.dropna().unique()[:3]}
            if held == {0.0, 1.0}:
                out.append([frame, str(column)])
        except Exception:
            continue
    print(json.dumps(out))


def word_columns(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column], ...]`` for each pair whose column holds words: its first
    non-missing values are all strings, none of which starts with a digit (a date or a
    number written as text orders as its value does); run it in a probe."""
    out = []
    for table, (frame, column) in _tables(pairs):
        head = _text_head(table, column)
        if head and all(v[:1].isalpha() for v in head):
            out.append([frame, str(column)])
    print(json.dumps(out))


def _text_head(table: Any, column: str) -> list[str]:
    """The first 20 non-missing values of a column of text (an object or string dtype
    whose values are all strings); empty for any other column, or when reading fails."""
    try:
        series = table[column]
        if getattr(series, "ndim", 1) != 1 or series.dtype.kind not in "OSUT":
            return []
        head = series.dropna().head(20).tolist()
    except Exception:
        return []
    return head if all(isinstance(v, str) for v in head) else []


def date_texts(pairs: Sequence[tuple[str, str]]) -> None:
    """Print ``[[frame, column, first], ...]`` for each pair whose column holds dates
    written as text: a text column whose first non-missing values all start with a digit
    and all parse as dates with ``pandas.to_datetime`` (``first`` is the first of them);
    run it in a probe."""
    import pandas as pd

    out = []
    for table, (frame, column) in _tables(pairs):
        head = _text_head(table, column)
        if not head or not all(v[:1].isdigit() for v in head):
            continue
        try:
            pd.to_datetime(pd.Series(head))  # raises when one of them is no date
        except Exception:
            continue
        out.append([frame, str(column), head[0]])
    print(json.dumps(out))
