"""Cheap, size-capped content fingerprints used to detect in-place mutation.

Runs inside the kernel. A fingerprint is a small hashable value; equal
fingerprints of the same object before and after a cell mean "unchanged".
Each fingerprint says whether it is *exact* (covers the whole value) or
*approximate* (sampled because the value is above a size cap): the runtime
pass trusts an exact fingerprint either way, and combines an approximate one
with static evidence (``x[i] = v``, ``inplace=True``…) so a change in an
unsampled row of a huge frame is still caught when the code says it mutates.

Objects it cannot look into (C extension objects without ``__dict__``)
get ``None``: unknown, decided by static evidence alone.
"""

from __future__ import annotations

import sys
import types
import zlib
from typing import Any, NamedTuple

#: Whole-buffer hashing below this many bytes (numpy) / cells (pandas).
NUMPY_EXACT_BYTES = 4 * 1024 * 1024
PANDAS_EXACT_CELLS = 200_000
#: Rows (pandas) / elements (containers) sampled above the caps.
SAMPLE_ROWS = 2_000
CONTAINER_CAP = 2_000
MAX_DEPTH = 4

_SCALARS = (int, float, complex, str, bytes, bool, type(None))


class Fingerprint(NamedTuple):
    """A content fingerprint and whether it covers the whole value.

    `full` (large pandas objects, thorough mode only) holds per-column sums over
    every value; `exact` is then true when every column is numeric.
    """

    value: Any
    exact: bool
    full: Any = None
    parts: dict[str, Any] | None = None
    """Per part (``['col']``, ``['key']``, ``[0]``, ``.attr``), a fingerprint of that part
    alone, when the value's parts are tracked; None otherwise."""
    frame: Any = None
    """What holds the parts together, apart from them (a frame's index): when it changes,
    the change is the whole value's."""


def compare(old: Fingerprint, new: Fingerprint) -> tuple[bool, bool]:
    """(changed, certain): a difference is always certain; sameness only when both cover
    the whole value (fingerprints taken in different modes compare on what they share)."""
    if old.value != new.value:
        return True, True
    if old.full is not None and new.full is not None:
        if old.full != new.full:
            return True, True
        return False, old.exact and new.exact
    certain = old.exact and new.exact and old.full is None and new.full is None
    return False, certain


def changed_parts(old: Fingerprint, new: Fingerprint) -> list[str] | None:
    """The parts whose fingerprints differ (added and removed ones included), or None when
    the change cannot be put on parts (untracked, or the frame around them changed)."""
    if old.parts is None or new.parts is None or old.frame != new.frame:
        return None
    out = [k for k, v in new.parts.items() if old.parts.get(k, _ABSENT) != v]
    out += [k for k in old.parts if k not in new.parts]
    if not out:
        return None  # the change is outside every part (an index, the order)
    return out


_ABSENT = object()


def column_layout(frame: Any) -> tuple[Any, ...] | None:
    """Where each column of a frame keeps its values (buffer addresses), its labels and
    its index object: enough to see which columns a ``df[label] = ..`` replaced, with no
    hashing. None when the frame's layout cannot be read."""
    np = sys.modules.get("numpy")
    try:
        mgr = frame._mgr
        blocks = mgr.blocks
        starts = np.empty(len(blocks), dtype=np.int64)
        steps = np.empty(len(blocks), dtype=np.int64)
        for i, block in enumerate(blocks):
            values = block.values
            if isinstance(values, np.ndarray) and values.ndim == 2:
                starts[i] = values.__array_interface__["data"][0]
                steps[i] = values.strides[0]
            else:
                starts[i], steps[i] = id(values), 0
        blknos, blklocs = mgr.blknos, mgr.blklocs
        addrs = starts[blknos] + blklocs.astype(np.int64) * steps[blknos]
        # the blocks are kept, so no address or id is reused while the layouts are compared
        return (frame.columns, addrs, frame.index, tuple(blocks))
    except Exception:  # another pandas internals layout: no cheap answer
        return None


def changed_columns(old: tuple[Any, ...] | None, new: tuple[Any, ...] | None) -> list[str] | None:
    """Parts (``['c3']``) of the columns replaced, added or removed between two layouts;
    None when the change is not one of columns (the index changed, labels repeat)."""
    if old is None or new is None or old[2] is not new[2]:
        return None
    old_cols, old_addrs = old[0], old[1]
    new_cols, new_addrs = new[0], new[1]
    if not (old_cols.is_unique and new_cols.is_unique):
        return None
    if old_cols is new_cols or old_cols.equals(new_cols):
        np = sys.modules["numpy"]
        return [f"[{old_cols[int(i)]!r}]" for i in np.flatnonzero(old_addrs != new_addrs)]
    old_cols, new_cols = old_cols.tolist(), new_cols.tolist()
    before = dict(zip(old_cols, old_addrs.tolist(), strict=True))
    after = dict(zip(new_cols, new_addrs.tolist(), strict=True))
    out = [f"[{c!r}]" for c, a in after.items() if before.get(c) != a]
    out += [f"[{c!r}]" for c in before if c not in after]
    return out


def reframed_columns(old: Any, new: Any) -> list[str] | None:
    """For a name rebound from frame `old` to frame `new` (``df = df.assign(..)``): the
    parts (``['c']``) that differ, added and removed columns included, when both frames
    hold the same rows in the same order and their shared columns in the same order;
    None otherwise (the rebinding then replaces the whole value). A column counts as the
    same when it holds the same buffer or equal values of the same dtype."""
    pd = sys.modules.get("pandas")
    if pd is None or not (isinstance(old, pd.DataFrame) and isinstance(new, pd.DataFrame)):
        return None
    try:
        if not (old.columns.is_unique and new.columns.is_unique):
            return None
        if old.index is not new.index and not (
            old.index.dtype == new.index.dtype
            and list(old.index.names) == list(new.index.names)
            and old.index.equals(new.index)
        ):
            return None
        in_new = set(new.columns)
        in_old = set(old.columns)
        if [c for c in old.columns if c in in_new] != [c for c in new.columns if c in in_old]:
            return None  # the shared columns were reordered
        before = dict(zip(old.columns, old._iter_column_arrays(), strict=True))
        out: list[str] = []
        for label, arr in zip(new.columns, new._iter_column_arrays(), strict=True):
            prev = before.get(label, _ABSENT)
            if prev is _ABSENT or not _same_column(prev, arr, pd):
                out.append(f"[{label!r}]")
        out += [f"[{c!r}]" for c in old.columns if c not in in_new]
        return out
    except Exception:  # another pandas internals layout, an odd index: the whole value
        return None


def restated_parts(old: Any, new: Any) -> tuple[str, ...] | None:
    """For a name rebound from ``old`` to ``new``, a new object: ``()`` when it holds
    exactly what ``old`` held, the parts that differ (``("['c']",)``) for a frame with the
    same rows (`reframed_columns`), None when neither can be told for sure."""
    parts = reframed_columns(old, new)
    if parts is not None:
        return tuple(parts)
    return () if _same_plain(old, new) else None


def same_value(old: Any, new: Any) -> bool:
    """Whether ``new``, a new object, holds exactly what ``old`` holds: a frame with the
    same rows, columns, dtypes and values; a Series or numpy array with the same dtype,
    index or shape, and values; a list, tuple, dict or set of at most `CONTAINER_CAP`
    immutable scalars written alike (the same ``repr``, so ``1``, ``1.0`` and ``True``
    differ). False whenever it cannot be told for sure (another type, an object array, an
    error): a rebinding then replaces the value, as it always did."""
    return restated_parts(old, new) == ()


def _same_plain(old: Any, new: Any) -> bool:
    """`same_value` for what is not a frame."""
    if type(old) is not type(new):
        return False
    pd = sys.modules.get("pandas")
    np = sys.modules.get("numpy")
    try:
        if pd is not None and isinstance(new, pd.Series):
            return bool(
                old.dtype == new.dtype
                and old.name == new.name
                and old.index.dtype == new.index.dtype
                and list(old.index.names) == list(new.index.names)
                and old.index.equals(new.index)
                and old.equals(new)
            )
        if np is not None and isinstance(new, np.ndarray):
            if old.dtype != new.dtype or old.shape != new.shape or new.dtype == object:
                return False
            return bool(np.array_equal(old, new, equal_nan=new.dtype.kind in "fc"))
        if not isinstance(new, (list, tuple, dict, set, frozenset)):
            return False
        if len(new) > CONTAINER_CAP or len(old) != len(new):
            return False
        flat = [x for kv in new.items() for x in kv] if isinstance(new, dict) else list(new)
        if not all(is_immutable_scalar(x) for x in flat):
            return False
        if isinstance(new, (set, frozenset)):
            return sorted(map(repr, old)) == sorted(map(repr, new))
        # repr tells 1, 1.0 and True apart, and keeps a dict's order
        return repr(old) == repr(new)
    except Exception:  # an odd type or layout: not provably the same
        return False


def _same_column(a: Any, b: Any, pd: Any) -> bool:
    if a is b:
        return True
    if a.dtype != b.dtype or len(a) != len(b):
        return False
    np = sys.modules["numpy"]
    # string and other extension arrays over a numpy buffer: compare the buffers
    bufa, bufb = getattr(a, "_ndarray", a), getattr(b, "_ndarray", b)
    if (
        isinstance(bufa, np.ndarray)
        and isinstance(bufb, np.ndarray)
        and bufa.__array_interface__ == bufb.__array_interface__
    ):
        return True  # one buffer, seen through two frames
    return bool(pd.Series(a, copy=False).equals(pd.Series(b, copy=False)))


def is_immutable_scalar(obj: Any) -> bool:
    """int, float, complex, str, bytes, bool, None, or a tuple of these."""
    if isinstance(obj, _SCALARS):
        return True
    return type(obj) is tuple and all(is_immutable_scalar(x) for x in obj)


def fingerprint(obj: Any, *, thorough: bool = True) -> Fingerprint | None:
    """Fingerprint `obj`, or None if its content cannot be inspected.

    `thorough` adds, for a large pandas object, a pass over every numeric value (about
    1 ms per million values); skip it when static evidence already decides.
    """
    try:
        fp = _fp(obj, 0)
        pd = sys.modules.get("pandas")
        if (
            thorough
            and fp is not None
            and not fp.exact
            and pd is not None
            and isinstance(obj, (pd.DataFrame, pd.Series))
        ):
            sums, all_numeric = _numeric_bit_sums(obj)
            parts = fp.parts
            if parts is not None and isinstance(obj, pd.DataFrame) and len(sums) == len(parts):
                parts = {k: (v, sm) for (k, v), sm in zip(parts.items(), sums, strict=True)}
            return Fingerprint(fp.value, all_numeric, sums, parts, fp.frame)
        return fp
    except Exception:  # a user object whose __eq__/__len__/... raises: unknown
        return None


def _fp(obj: Any, depth: int) -> Fingerprint | None:
    if isinstance(obj, _SCALARS):
        return Fingerprint(
            (type(obj).__name__, obj if not isinstance(obj, float) or obj == obj else "nan"), True
        )
    if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)):
        # rebinding is tracked by identity; module/function internals are not data
        return Fingerprint(("id", id(obj)), True)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return _fp_ndarray(obj, np)
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
        return _fp_pandas(obj, pd)
    if depth >= MAX_DEPTH:
        return Fingerprint(("deep", type(obj).__name__, id(obj)), False)
    if isinstance(obj, (list, tuple)):
        return _fp_sequence(obj, depth)
    if isinstance(obj, (set, frozenset)):
        items = list(obj) if len(obj) <= CONTAINER_CAP else None
        if items is None:
            return Fingerprint(("set", len(obj)), False)
        return Fingerprint(("set", len(obj), hash(frozenset(_hashable(x) for x in items))), True)
    if isinstance(obj, dict):
        return _fp_mapping(obj, depth)
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        inner = _fp_mapping(d, depth, attrs=True)
        slots = _slot_values(obj, depth)
        return Fingerprint((type(obj).__name__, inner.value, slots), inner.exact, parts=inner.parts)
    return None


def _hashable(x: Any) -> Any:
    try:
        hash(x)
        return x
    except TypeError:
        return ("unhashable", id(x))


def _slot_values(obj: Any, depth: int) -> tuple[Any, ...]:
    out = []
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()) or ():
            if isinstance(name, str) and name not in ("__dict__", "__weakref__"):
                fp = _fp(getattr(obj, name, None), depth + 1)
                out.append((name, fp.value if fp else ("opaque", id(getattr(obj, name, None)))))
    return tuple(out)


_SCALAR_TYPES = frozenset(_SCALARS)


def _fp_sequence(obj: list[Any] | tuple[Any, ...], depth: int) -> Fingerprint:
    n = len(obj)
    if n <= CONTAINER_CAP:
        types_ = tuple(map(type, obj))
        if _SCALAR_TYPES.issuperset(types_):
            # fast path: a sequence of scalars hashes directly (types keep 1 != 1.0 != True)
            parts = (
                {f"[{i}]": (t, v) for i, (t, v) in enumerate(zip(types_, obj, strict=True))}
                if depth == 0
                else None
            )
            return Fingerprint(
                (type(obj).__name__, n, hash(tuple(obj)), hash(types_)), True, parts=parts
            )
    exact = n <= CONTAINER_CAP
    if exact:
        idx: range | list[int] = range(n)
    else:
        step = max(1, n // CONTAINER_CAP)
        idx = [*range(0, n, step), n - 1]
    parts = []
    for i in idx:
        item = obj[i]
        fp = _fp(item, depth + 1)
        if fp is None:
            parts.append(("opaque", id(item)))
            exact = False
        else:
            parts.append(fp.value)
            exact = exact and fp.exact
    by_part = (
        {f"[{i}]": v for i, v in enumerate(parts)} if depth == 0 and n <= CONTAINER_CAP else None
    )
    return Fingerprint((type(obj).__name__, n, hash(tuple(parts))), exact, parts=by_part)


def _fp_mapping(obj: dict[Any, Any], depth: int, attrs: bool = False) -> Fingerprint:
    n = len(obj)
    exact = n <= CONTAINER_CAP
    parts = []
    for i, (k, v) in enumerate(obj.items()):
        if i >= CONTAINER_CAP:
            break
        fp = _fp(v, depth + 1)
        if fp is None:
            parts.append((_hashable(k), ("opaque", id(v))))
            exact = False
        else:
            parts.append((_hashable(k), fp.value))
            exact = exact and fp.exact
    by_part = None
    if depth == 0 and n <= CONTAINER_CAP:
        by_part = {(f".{k}" if attrs else f"[{k!r}]"): v for k, v in parts}
    return Fingerprint(("dict", n, hash(tuple(parts))), exact, parts=by_part)


def _fp_ndarray(arr: Any, np: Any) -> Fingerprint:
    head = (arr.shape, str(arr.dtype), arr.strides)
    if arr.dtype == object:
        seq = _fp_sequence(
            arr.ravel().tolist()
            if arr.size <= CONTAINER_CAP
            else arr.ravel()[:: max(1, arr.size // CONTAINER_CAP)].tolist(),
            1,
        )
        return Fingerprint((head, seq.value), seq.exact and arr.size <= CONTAINER_CAP)
    if arr.nbytes <= NUMPY_EXACT_BYTES:
        buf = np.ascontiguousarray(arr)
        return Fingerprint((head, zlib.crc32(memoryview(buf).cast("B"))), True)
    flat = arr.reshape(-1)
    step = max(1, flat.size // (SAMPLE_ROWS * 16))
    sample = np.ascontiguousarray(flat[::step])
    return Fingerprint((head, zlib.crc32(memoryview(sample).cast("B"))), False)


def _fp_pandas(obj: Any, pd: Any) -> Fingerprint:
    hash_obj = pd.util.hash_pandas_object
    if isinstance(obj, pd.Index):
        head: tuple[Any, ...] = ("index", len(obj), str(obj.dtype))
        frame = obj.to_series(index=pd.RangeIndex(len(obj)))
        body, exact = _hash_rows(frame, hash_obj, index=False)
        return Fingerprint((head, body), exact)
    if isinstance(obj, pd.DataFrame):
        head = ("frame", obj.shape, tuple(map(str, obj.dtypes)), _labels(obj.columns))
        index_fp = (
            _fp_pandas(obj.index, pd).value
            if not isinstance(obj.index, pd.RangeIndex)
            else ("range", obj.index.start, obj.index.stop, obj.index.step)
        )
        cols, exact = _column_hashes(obj, pd)
        return Fingerprint(
            (head, index_fp, hash(tuple(cols.values()))),
            exact,
            parts=cols if len(cols) == obj.shape[1] else None,
            frame=index_fp,
        )
    else:
        head = ("series", obj.shape, str(obj.dtype), obj.name if _scalar_label(obj.name) else None)
    index_fp = (
        _fp_pandas(obj.index, pd).value
        if not isinstance(obj.index, pd.RangeIndex)
        else ("range", obj.index.start, obj.index.stop, obj.index.step)
    )
    body, exact = _hash_rows(obj, hash_obj, index=False)
    return Fingerprint((head, index_fp, body), exact)


def _column_hashes(frame: Any, pd: Any) -> tuple[dict[str, Any], bool]:
    """Per column, a hash of its values (rows sampled above the size cap)."""
    np = sys.modules["numpy"]
    n = len(frame)
    exact = frame.size <= PANDAS_EXACT_CELLS
    step = 1 if exact else max(1, n // SAMPLE_ROWS)
    try:
        arrays = list(frame._iter_column_arrays())
    except Exception:  # an older or newer pandas without it
        arrays = [frame.iloc[:, i].array for i in range(frame.shape[1])]
    out: dict[str, Any] = {}
    for label, arr in zip(frame.columns, arrays, strict=True):
        out[f"[{label!r}]"] = _hash_column(arr[::step] if step > 1 else arr, np, pd)
    return out, exact


def _hash_column(arr: Any, np: Any, pd: Any) -> int:
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "biufcmM":
        return zlib.crc32(memoryview(np.ascontiguousarray(arr)).cast("B"))
    try:
        hashed = pd.util.hash_array(np.asarray(arr, dtype=object))
    except TypeError:  # unhashable cells (lists, dicts): their repr
        hashed = pd.util.hash_array(np.asarray([repr(x) for x in arr], dtype=object))
    return zlib.crc32(memoryview(np.ascontiguousarray(hashed)).cast("B"))


def _scalar_label(x: Any) -> bool:
    return isinstance(x, _SCALARS)


def _labels(cols: Any) -> int:
    return hash(tuple(str(c) for c in cols)) if len(cols) <= CONTAINER_CAP else len(cols)


def _hash_rows(obj: Any, hash_obj: Any, *, index: bool) -> tuple[Any, bool]:
    cells = obj.size if hasattr(obj, "size") else len(obj)
    n = len(obj)
    if n == 0:
        return 0, True
    exact = cells <= PANDAS_EXACT_CELLS
    if not exact:
        step = max(1, n // SAMPLE_ROWS)
        obj = obj.iloc[::step]
    try:
        hashed = hash_obj(obj, index=index)
    except TypeError:  # unhashable cells (lists, dicts): fall back to their repr
        hashed = hash_obj(obj.astype(str), index=index)
    values = hashed.to_numpy()
    return zlib.crc32(memoryview(values.copy(order="C")).cast("B")), exact


def _numeric_bit_sums(obj: Any) -> tuple[tuple[Any, ...], bool]:
    """Per numeric column, the wrapping uint64 sum of its values' bit patterns: any
    changed value changes it (barring exact compensation)."""
    np = sys.modules["numpy"]
    cols = [obj] if obj.ndim == 1 else [obj.iloc[:, i] for i in range(obj.shape[1])]
    sums: list[Any] = []
    all_numeric = True
    for col in cols:
        arr = col.to_numpy()
        if arr.dtype.kind in "fiub" and arr.dtype.itemsize in (1, 2, 4, 8):
            bits = arr.view(f"u{arr.dtype.itemsize}").astype(np.uint64, copy=False)
            sums.append(int(np.add.reduce(bits, dtype=np.uint64)))
        else:
            all_numeric = False
            sums.append(None)
    return tuple(sums), all_numeric
