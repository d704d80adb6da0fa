"""Parts of live values, inside the kernel: normalizing access paths, and which calls
may change what they are given.

A *part* is written as the text that reaches it: ``['a']`` (a frame column or a
mapping key), ``[0]`` (a list, tuple or array element, non-negative), ``.w``
(an instance attribute). A symbol is a root name and a list of parts; its text
is the name followed by the parts, ``d['k']['j']``.

`normalize` reads a static access path against the live object: ``df.a`` on a
frame is the column ``['a']``, ``lst[-1]`` is ``[n - 1]``, ``np.random.rand`` is
the part ``.random.rand`` of ``np`` (a module's attributes are its parts). It stops,
conservatively, wherever the object is not one whose parts are tracked.
`may_change_arguments` says whether a callee may change the objects passed to it; only
well-known pure callees are trusted.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

#: Builtins that never change their arguments.
PURE_BUILTINS = frozenset(
    {
        "print", "len", "sum", "min", "max", "sorted", "list", "tuple", "dict", "set",
        "frozenset", "str", "repr", "int", "float", "bool", "complex", "round", "abs",
        "isinstance", "issubclass", "type", "enumerate", "zip", "range", "any", "all", "id",
        "hash", "reversed", "map", "filter", "format", "divmod", "pow", "hasattr", "getattr",
        "dir", "iter", "next", "bytes", "ord", "chr", "bin", "hex", "oct", "slice", "display",
        "callable", "ascii",
    }
)  # fmt: skip
#: Top-level modules whose functions do not change their arguments (but see below).
PURE_MODULES = frozenset(
    {
        "numpy", "pandas", "math", "statistics", "logging", "json", "re", "itertools",
        "operator", "collections", "datetime", "decimal", "fractions", "string", "textwrap",
        "functools", "builtins", "cmath", "pprint", "copy", "scipy",
    }
)  # fmt: skip
#: Functions of those modules that do change an argument.
IMPURE_FUNCTIONS = frozenset(
    {"shuffle", "copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"}
)
#: Methods that change their receiver.
MUTATING_METHODS = frozenset(
    {
        "append", "extend", "insert", "pop", "remove", "clear", "update", "sort", "reverse",
        "setdefault", "popitem", "add", "discard", "difference_update", "intersection_update",
        "symmetric_difference_update", "__setitem__", "__delitem__", "fill", "resize", "put",
        "itemset", "setflags", "partition", "byteswap", "__iadd__", "__isub__", "__imul__",
    }
)  # fmt: skip


#: The part of a DataFrame that is its rows: which rows exist, in which order.
ROWS = ".index"


def part_text(key: Any, kind: str = "key") -> str:
    """The text of one part: ``['a']``, ``[0]``, ``.w``."""
    return f".{key}" if kind == "attr" else f"[{key!r}]"


def _hashable(v: Any) -> Any:
    return tuple(_hashable(x) for x in v) if isinstance(v, list) else v


def _is_plain_instance(obj: Any) -> bool:
    if isinstance(obj, type):
        return getattr(obj, "__module__", None) == "__main__"
    if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
        return False
    return isinstance(getattr(obj, "__dict__", None), dict)


def normalize(obj: Any, steps: tuple[Any, ...]) -> list[list[str]]:
    """The part paths an access reaches on `obj`: one path, or several for ``df[['a', 'b']]``.

    The empty path means the whole object.
    """
    return reach(obj, steps)[0]


def reach(obj: Any, steps: tuple[Any, ...]) -> tuple[list[list[str]], bool]:
    """`normalize`, and whether the parts reached are all the steps went to (False for
    ``df['x'][0]``: a store there changes something inside the column, maybe not it)."""
    paths, used = _reach(obj, steps)
    return paths, used == len(steps)


def _reach(obj: Any, steps: tuple[Any, ...]) -> tuple[list[list[str]], int]:
    pd = sys.modules.get("pandas")
    np = sys.modules.get("numpy")
    parts: list[str] = []
    used = 0
    for kind, value in steps:
        used += 1
        if obj is None and not parts:
            break
        if pd is not None and isinstance(obj, pd.DataFrame):
            cols = obj.columns
            if kind == "rows":
                return [[*parts, ROWS]], used
            if kind in ("fcols", "mcols"):
                found = (
                    frame_columns(cols, value, None)
                    if kind == "fcols"
                    else frame_columns(cols, value[0], value[1])
                )
                if found is None:
                    break
                return [[*parts, part_text(x)] for x in found], used
            if kind in ("key", "col"):
                label = _hashable(value)
                return (
                    ([[*parts, part_text(label)]], used)
                    if _is_label(label)
                    else ([parts], used - 1)
                )
            if kind in ("keys", "cols"):
                labels = [_hashable(v) for v in value]
                if all(_is_label(x) for x in labels):
                    return [[*parts, part_text(x)] for x in labels], used
                break
            if kind == "icol" and isinstance(value, int) and -len(cols) <= value < len(cols):
                return [[*parts, part_text(cols[value])]], used
            if kind == "attr" and _has_label(cols, value) and not hasattr(type(obj), value):
                return [[*parts, part_text(value)]], used
            break
        if isinstance(obj, dict):
            if kind == "key":
                key = _hashable(value)
                try:
                    nxt = obj.get(key)
                except TypeError:
                    break
                parts.append(part_text(key))
                obj = nxt
                continue
            break
        if isinstance(obj, (list, tuple)):
            if kind in ("key", "elem") and type(value) is int:
                n = len(obj)
                idx = value + n if value < 0 else value
                if idx < 0:
                    break
                parts.append(part_text(idx))
                obj = obj[idx] if idx < n else None
                continue
            break
        if np is not None and isinstance(obj, np.ndarray):
            first = value[0] if kind == "key" and isinstance(value, list) and value else value
            if kind in ("key", "elem") and type(first) is int and obj.ndim >= 1:
                n = obj.shape[0]
                idx = first + n if first < 0 else first
                if idx >= 0:
                    parts.append(part_text(idx))
                    return [parts], used
            break
        if kind == "attr" and isinstance(obj, types.ModuleType):
            # a module's attributes are parts of their own: ``np.random`` apart from ``np.mean``
            parts.append(part_text(value, "attr"))
            obj = getattr(obj, value, None)
            continue
        if kind == "attr" and _is_plain_instance(obj):
            d = vars(obj)
            if value in d or not parts:
                if value not in d and hasattr(type(obj), value) and not isinstance(obj, type):
                    break  # a method or class attribute read through the instance
                parts.append(part_text(value, "attr"))
                obj = d.get(value)
                continue
            break
        break
    else:
        return [parts], used
    return [parts], used - 1


def frame_columns(cols: Any, labels: list[Any], suffix: str | None) -> list[Any] | None:
    """The columns of a frame that `labels` name; None when one is not a column (the read
    is then of the whole frame). With a merge `suffix`, a label may be a suffixed column of
    this side (``v_x``), and labels of the other side are skipped."""
    if not cols.is_unique:
        return None
    out: list[Any] = []
    for raw in labels:
        label = _hashable(raw)
        if not _is_label(label):
            return None
        if _has_label(cols, label):
            out.append(label)
        elif suffix is None:
            return None
        elif (
            isinstance(label, str)
            and label.endswith(suffix)
            and _has_label(cols, label[: -len(suffix)])
        ):
            out.append(label[: -len(suffix)])
    return out


def _is_label(x: Any) -> bool:
    return isinstance(x, (str, int, float, bool, tuple)) and not isinstance(x, list)


def _has_label(cols: Any, label: Any) -> bool:
    try:
        return label in cols
    except TypeError:
        return False


def may_change_arguments(callee: str, ns: dict[str, Any]) -> bool:
    """Whether calling `callee` (a dotted name in the user namespace) may change its args."""
    if callee == "?":
        return True
    head, _, rest = callee.partition(".")
    obj = ns.get(head, getattr(builtins, head, None) if head not in ns else None)
    if not rest:
        return not (head in PURE_BUILTINS and head not in ns)
    attr = rest.rsplit(".", 1)[-1]
    if isinstance(obj, types.ModuleType):
        top = obj.__name__.split(".")[0]
        return top not in PURE_MODULES or attr in IMPURE_FUNCTIONS
    if attr in IMPURE_FUNCTIONS or attr in MUTATING_METHODS:
        return True  # rng.shuffle(arr): a method of a numpy object that changes its argument
    return not tracked_pure_receiver(obj)


def tracked_pure_receiver(obj: Any) -> bool:
    """Objects whose methods change them only through `MUTATING_METHODS` or ``inplace=True``."""
    if isinstance(obj, (list, dict, set, tuple, str, bytes, int, float, frozenset)):
        return True
    mod = type(obj).__module__.split(".")[0]
    return mod in ("pandas", "numpy")
