"""Looking at the user's objects from inside the kernel: summaries, members, callables."""

from __future__ import annotations

import itertools
import sys
import types
from typing import Any

from stateguard.lineage.fingerprint import CONTAINER_CAP

_SUMMARY_CHARS = 120


def summarize(obj: Any) -> str:
    """A short, bounded description of a value for reports and hints."""
    pd = sys.modules.get("pandas")
    np = sys.modules.get("numpy")
    try:
        if pd is not None and isinstance(obj, pd.DataFrame):
            cols = ", ".join(map(str, list(obj.columns)[:8]))
            more = ", …" if obj.shape[1] > 8 else ""
            return f"DataFrame {obj.shape[0]}x{obj.shape[1]} [{cols}{more}]"
        if pd is not None and isinstance(obj, pd.Series):
            if len(obj) <= 5:
                return f"Series {obj.to_dict()!r}"[:_SUMMARY_CHARS]
            return f"Series len={len(obj)} name={obj.name!r} dtype={obj.dtype}"
        if np is not None and isinstance(obj, np.ndarray) and obj.size > 10:
            return f"ndarray shape={obj.shape} dtype={obj.dtype}"
        if isinstance(obj, types.ModuleType):
            return f"module {obj.__name__}"
        if isinstance(obj, (types.FunctionType, type)):
            return f"{type(obj).__name__} {obj.__qualname__}"
        text = repr(obj)
    except Exception as exc:  # a user __repr__ that raises
        return f"<{type(obj).__name__}: repr failed: {type(exc).__name__}>"
    return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"


_MISSING = object()
_SCALAR_TYPES = frozenset({int, float, complex, str, bytes, bool, type(None)})


def _equal_scalars(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _is_user_callable(obj: Any, user_ns: dict[str, Any]) -> bool:
    if isinstance(obj, types.FunctionType):
        return obj.__globals__ is user_ns
    if isinstance(obj, type):
        return getattr(obj, "__module__", None) == "__main__"
    return False


def _codes_of(obj: Any) -> list[types.CodeType]:
    if isinstance(obj, types.FunctionType):
        return [obj.__code__]
    codes: list[types.CodeType] = []
    if isinstance(obj, type):
        # calling a class runs construction only: __new__, __init__, __post_init__
        for attr_name in ("__new__", "__init__", "__post_init__"):
            fn = getattr(obj, attr_name, None)
            fn = getattr(fn, "__func__", fn)
            if isinstance(fn, types.FunctionType) and fn.__module__ == "__main__":
                codes.append(fn.__code__)
        # and the methods construction calls on the instance (``self.setup()``), transitively
        seen = {id(c) for c in codes}
        todo = list(codes)
        while todo:
            for attr_name in todo.pop().co_names:
                fn = getattr(obj, attr_name, None)
                fn = getattr(fn, "__func__", fn)
                if (
                    isinstance(fn, types.FunctionType)
                    and fn.__module__ == "__main__"
                    and id(fn.__code__) not in seen
                ):
                    seen.add(id(fn.__code__))
                    codes.append(fn.__code__)
                    todo.append(fn.__code__)
    return codes


def _member_ids(obj: Any, depth: int = 2) -> set[int]:
    """Ids of objects held (up to `depth` levels, capped) inside a container or instance."""
    out: set[int] = set()
    if depth == 0:
        return out
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        base = obj.base
        while base is not None:  # views share memory with every array up their base chain
            out.add(id(base))
            base = getattr(base, "base", None)
        return out
    items: Any
    if isinstance(obj, dict):
        items = obj.values()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        if _SCALAR_TYPES.issuperset(map(type, itertools.islice(obj, CONTAINER_CAP))):
            return out  # only scalars inside: nothing another name could alias
        items = obj
    else:
        d = getattr(obj, "__dict__", None)
        if not isinstance(d, dict) or isinstance(obj, (types.ModuleType, type)):
            return out
        items = d.values()
    for i, item in enumerate(items):
        if i >= CONTAINER_CAP:
            break
        if isinstance(item, (int, float, str, bytes, bool, type(None))):
            continue
        out.add(id(item))
        out |= _member_ids(item, depth - 1)
    return out


def _shares_buffer(obj: Any, ids: set[int]) -> bool:
    """numpy views: an array whose base chain reaches a candidate array."""
    np = sys.modules.get("numpy")
    if np is None or not isinstance(obj, np.ndarray):
        return False
    base = obj.base
    while base is not None:
        if id(base) in ids:
            return True
        base = getattr(base, "base", None)
    return False
