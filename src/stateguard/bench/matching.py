"""Object comparison with DSEval's matcher options.

`compare_objects(ref, sub, **options)` compares a reference object with a submitted one
(pandas DataFrame / Series / Index, numpy arrays, scalars, lists / tuples / dicts / sets)
and returns a `MatchResult`. Options (all default False unless noted):

- ``ignore_order``: sort rows of frames / values of series / items of lists first
  (implies ``ignore_index`` for pandas objects).
- ``ignore_index``: drop the index of frames and series; compare dict values in order.
- ``ignore_names``: ignore column order when the column sets agree, column / index /
  series names.
- ``ignore_dtypes``: ignore dtypes (values must still agree).
- ``value_only``: strip containers first (frames, series, indexes, arrays, lists, tuples
  become nested lists; one-element lists become their element).
- ``match_partial``: accept a submission that contains the reference (a frame with extra
  columns, a frame one of whose columns or whose index is the reference, ...).
- ``type_only``: only the types must agree. ``strict_type``: numpy dtypes must agree.
- ``rtol`` (default 1e-5) and ``atol`` (default 1e-8): float tolerance, DSEval's defaults.
  NaN equals NaN.
- ``metrictol`` (default None): for numbers, the submission matches when it is no less
  than ``metrictol`` times the reference (a score that may be higher, not lower).

Semantics follow DSEval's ``ExactMatcher`` (checked case by case against its package),
with two deliberate differences: a scalar NaN matches NaN, and a pandas extension array
(what ``.values`` gives for a string column under pandas 3) compares as the numpy array
pandas 2 gave for the same code. DSEval compares scalars with
``np.isclose``, under which a NaN reference matches nothing, not even itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

BOOL_OPTIONS = frozenset(
    {
        "ignore_order",
        "ignore_index",
        "ignore_names",
        "ignore_dtypes",
        "value_only",
        "match_partial",
        "type_only",
        "strict_type",
    }
)
FLOAT_OPTIONS = frozenset({"rtol", "atol", "metrictol"})
MATCH_OPTIONS = BOOL_OPTIONS | FLOAT_OPTIONS
"""Every option `compare_objects` understands."""

LOOSE_OPTIONS: dict[str, bool] = {
    "ignore_order": True,
    "ignore_names": True,
    "ignore_dtypes": True,
    "match_partial": True,
}
"""Options DSEval adds for its second, "partial credit" comparison."""

_PANDAS = (pd.DataFrame, pd.Series, pd.Index)
_EXTENSION = pd.api.extensions.ExtensionArray


def _as_numpy(obj: Any) -> Any:
    """A pandas extension array as a numpy array (missing values as None); else ``obj``."""
    if not isinstance(obj, _EXTENSION):
        return obj
    try:
        return obj.to_numpy(dtype=object, na_value=None)
    except (TypeError, ValueError):
        return np.asarray(obj, dtype=object)


class MatchResult(BaseModel):
    """Whether two objects match, and why not."""

    model_config = ConfigDict(frozen=True)

    match: bool
    reason: str = ""


def _ok() -> MatchResult:
    return MatchResult(match=True)


def _fail(reason: str) -> MatchResult:
    return MatchResult(match=False, reason=reason)


def _is_number(obj: Any) -> bool:
    return isinstance(obj, int | float | np.number) and not isinstance(obj, bool | np.bool_)


def strip_container(obj: Any) -> Any:
    """Turn array-likes into nested lists and unwrap one-element lists (``value_only``)."""
    if isinstance(obj, pd.DataFrame):
        obj = obj.to_numpy().tolist()
    elif isinstance(obj, pd.Series | pd.Index | np.ndarray):
        obj = obj.tolist()
    if isinstance(obj, list | tuple | set):
        obj = [strip_container(x) for x in obj]
        if len(obj) == 1:
            return obj[0]
    return obj


class _Matcher:
    """One comparison run with fixed options."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        unknown = set(options) - MATCH_OPTIONS
        if unknown:
            raise ValueError(f"unknown match options: {sorted(unknown)}")
        self.opt = {name: bool(options.get(name, False)) for name in BOOL_OPTIONS}
        self.rtol = float(options.get("rtol", 1e-5))
        self.atol = float(options.get("atol", 1e-8))
        metrictol = options.get("metrictol")
        self.metrictol = None if metrictol is None else float(metrictol)

    def __call__(self, ref: Any, sub: Any) -> MatchResult:
        if self.opt["type_only"]:
            return self.match(ref, sub)
        if self.opt["value_only"]:
            ref, sub = strip_container(ref), strip_container(sub)
        result = self.match(ref, sub)
        if not result.match and self.opt["match_partial"]:
            partial = self.match_partial(ref, sub)
            if partial.match:
                return partial
        return result

    def match(self, ref: Any, sub: Any) -> MatchResult:
        if self.opt["type_only"]:
            same = type(ref) is type(sub)
            return _ok() if same else _fail(f"type mismatch: {type(ref)} vs {type(sub)}")
        if isinstance(ref, bool | np.bool_) or isinstance(sub, bool | np.bool_):
            if not (isinstance(ref, bool | np.bool_) and isinstance(sub, bool | np.bool_)):
                return _fail(f"wrong type: {type(ref).__name__} vs {type(sub).__name__}")
            return _ok() if bool(ref) == bool(sub) else _fail(f"expected {ref}, got {sub}")
        if _is_number(ref) or _is_number(sub):
            return self._numbers(ref, sub)
        if isinstance(ref, _EXTENSION) or isinstance(sub, _EXTENSION):
            # pandas' own arrays (``.values`` of a string column in pandas 3) compare as
            # the numpy arrays pandas 2 gave for the same code
            ref, sub = _as_numpy(ref), _as_numpy(sub)
        if isinstance(ref, np.ndarray) or isinstance(sub, np.ndarray):
            return self._arrays(ref, sub)
        if isinstance(ref, _PANDAS) or isinstance(sub, _PANDAS):
            return self._pandas(ref, sub)
        if isinstance(ref, list | tuple | dict | set) or isinstance(sub, list | tuple | dict | set):
            return self._containers(ref, sub)
        try:
            equal = bool(ref == sub)
        except Exception as exc:  # objects whose == raises or is ambiguous
            return _fail(f"cannot compare {type(ref).__name__} and {type(sub).__name__}: {exc}")
        return _ok() if equal else _fail(f"expected {ref!r}, got {sub!r}")

    def _numbers(self, ref: Any, sub: Any) -> MatchResult:
        if not (_is_number(ref) and _is_number(sub)):
            return _fail(f"wrong type: {type(ref).__name__} vs {type(sub).__name__}")
        a, b = float(ref), float(sub)
        if self.metrictol is not None:
            if b < a * self.metrictol:
                return _fail(f"metric too low (less than {self.metrictol:.1%} of {ref}): {sub}")
            return _ok()
        if math.isnan(a) and math.isnan(b):
            return _ok()
        if a == b or abs(a - b) <= self.atol + self.rtol * abs(a):
            return _ok()
        return _fail(f"expected {ref}, got {sub}")

    def _arrays(self, ref: Any, sub: Any) -> MatchResult:
        if not (isinstance(ref, np.ndarray) and isinstance(sub, np.ndarray)):
            return _fail(f"wrong type: {type(ref).__name__} vs {type(sub).__name__}")
        if self.opt["strict_type"] and ref.dtype != sub.dtype:
            return _fail(f"wrong dtype: {ref.dtype} vs {sub.dtype}")
        if ref.shape != sub.shape:
            return _fail(f"wrong shape: {ref.shape} vs {sub.shape}")
        try:
            if np.issubdtype(ref.dtype, np.number) and np.issubdtype(sub.dtype, np.number):
                same = np.allclose(sub, ref, rtol=self.rtol, atol=self.atol, equal_nan=True)
            else:
                same = np.array_equal(ref, sub)
        except Exception as exc:  # e.g. incomparable object arrays
            return _fail(f"arrays not comparable: {exc}")
        return _ok() if same else _fail("arrays differ")

    def _pandas(self, ref: Any, sub: Any) -> MatchResult:
        kinds = (pd.DataFrame, pd.Series, pd.Index)
        kind = next((k for k in kinds if isinstance(ref, k) and isinstance(sub, k)), None)
        if kind is None:
            return _fail(f"mismatched type: {type(ref).__name__} vs {type(sub).__name__}")
        ref, sub = ref.copy(), sub.copy()
        if self.opt["ignore_names"]:
            sub = _align_names(ref, sub)
        if kind is not pd.Index and (self.opt["ignore_order"] or self.opt["ignore_index"]):
            if kind is pd.DataFrame:
                columns = list(ref.columns)
                if set(columns) != set(sub.columns):
                    return _fail(f"columns differ: {columns} vs {list(sub.columns)}")
                sub = sub[columns]
            ref, sub = ref.reset_index(drop=True), sub.reset_index(drop=True)
            if self.opt["ignore_order"]:
                ref, sub = _sorted_values(ref), _sorted_values(sub)
        if kind is pd.Index and self.opt["ignore_order"]:
            ref, sub = _sorted_values(ref), _sorted_values(sub)
        loose_types = self.opt["ignore_dtypes"]
        kwargs: dict[str, Any] = {"check_exact": False, "rtol": self.rtol, "atol": self.atol}
        try:
            if kind is pd.DataFrame:
                pd.testing.assert_frame_equal(
                    ref,
                    sub,
                    check_dtype=not loose_types,
                    check_index_type=not loose_types,
                    check_column_type=not loose_types,
                    **kwargs,
                )
            elif kind is pd.Series:
                pd.testing.assert_series_equal(
                    ref,
                    sub,
                    check_dtype=not loose_types,
                    check_index_type=not loose_types,
                    **kwargs,
                )
            else:
                pd.testing.assert_index_equal(ref, sub, exact=not loose_types, **kwargs)
        except AssertionError as exc:
            return _fail(f"{kind.__name__} differs: {str(exc).strip()[:500]}")
        except Exception as exc:  # assert_* can raise on exotic dtypes; fall back to equals
            return _ok() if ref.equals(sub) else _fail(f"{kind.__name__} differs ({exc})")
        return _ok()

    def _containers(self, ref: Any, sub: Any) -> MatchResult:
        if isinstance(ref, list | tuple) and isinstance(sub, list | tuple):
            if len(ref) != len(sub):
                return _fail(f"length mismatch: {len(ref)} vs {len(sub)}")
            if self.opt["ignore_order"]:
                ref, sub = _sorted_items(ref), _sorted_items(sub)
            for i, (a, b) in enumerate(zip(ref, sub, strict=True)):
                result = self.match(a, b)
                if not result.match:
                    return _fail(f"element {i}: {result.reason}")
            return _ok()
        if isinstance(ref, dict) and isinstance(sub, dict):
            if len(ref) != len(sub):
                return _fail(f"length mismatch: {len(ref)} vs {len(sub)}")
            if self.opt["ignore_index"]:
                pairs = list(zip(ref.values(), sub.values(), strict=True))
                labels = list(ref)
            else:
                if set(ref) != set(sub):
                    return _fail(f"keys differ: {sorted(map(str, ref))} vs {sorted(map(str, sub))}")
                pairs = [(ref[k], sub[k]) for k in ref]
                labels = list(ref)
            for label, (a, b) in zip(labels, pairs, strict=True):
                result = self.match(a, b)
                if not result.match:
                    return _fail(f"element {label!r}: {result.reason}")
            return _ok()
        if isinstance(ref, set) and isinstance(sub, set):
            return _ok() if ref == sub else _fail(f"sets differ: {ref} vs {sub}")
        return _fail(f"mismatched type: {type(ref).__name__} vs {type(sub).__name__}")

    def match_partial(self, ref: Any, sub: Any) -> MatchResult:
        """Accept a submission that presents the reference among other information."""
        candidates: list[tuple[str, Any]] = []
        if isinstance(sub, pd.DataFrame):
            if isinstance(ref, pd.DataFrame):
                flat = sub.reset_index()
                if all(c in flat.columns for c in ref.columns) and list(flat.columns) != list(
                    ref.columns
                ):
                    candidates.append((f"columns {list(ref.columns)}", flat[list(ref.columns)]))
            if isinstance(ref, pd.Series | list):
                candidates += [(f"column {c!r}", sub[c]) for c in sub.columns]
                candidates.append(("index", pd.Series(sub.index)))
        if isinstance(sub, pd.Series):
            if isinstance(ref, pd.Series | list):
                candidates += [
                    ("index", pd.Series(sub.index)),
                    ("values", pd.Series(sub.to_numpy())),
                ]
            if isinstance(ref, pd.DataFrame):
                candidates.append(("to_frame", sub.to_frame()))
        target = pd.Series(ref) if isinstance(ref, list) else ref
        for label, candidate in candidates:
            if self.match(target, candidate).match:
                return MatchResult(match=True, reason=f"partial match on {label}")
        return _fail("partial match failed")


def _align_names(ref: Any, sub: Any) -> Any:
    """Give ``sub`` the reference's column order, column names, index names and name."""
    if isinstance(ref, pd.DataFrame):
        if set(ref.columns) == set(sub.columns) and len(ref.columns) == len(sub.columns):
            sub = sub[list(ref.columns)]
        if sub.index.nlevels == ref.index.nlevels:
            sub = sub.rename_axis(index=ref.index.names)
        if len(sub.columns) == len(ref.columns):
            sub.columns = ref.columns
    elif isinstance(ref, pd.Series):
        if sub.index.nlevels == ref.index.nlevels:
            sub = sub.rename_axis(index=ref.index.names)
        sub.name = ref.name
    elif isinstance(ref, pd.Index) and sub.nlevels == ref.nlevels:
        sub = sub.set_names(ref.names)
    return sub


def _sorted_values(obj: Any) -> Any:
    """Sort frame rows / series / index values; fall back to sorting by string form."""
    try:
        if isinstance(obj, pd.DataFrame):
            return obj.sort_values(by=list(obj.columns)).reset_index(drop=True)
        if isinstance(obj, pd.Series):
            return obj.sort_values().reset_index(drop=True)
        return obj.sort_values()
    except (TypeError, ValueError):
        if isinstance(obj, pd.DataFrame):
            order = obj.astype(str).apply(tuple, axis=1).argsort(kind="stable")
            return obj.iloc[list(order)].reset_index(drop=True)
        order = np.argsort(np.asarray(obj.astype(str)), kind="stable")
        return (
            obj.take(order).reset_index(drop=True)
            if isinstance(obj, pd.Series)
            else obj.take(order)
        )


def _sorted_items(items: Any) -> list[Any]:
    try:
        return sorted(items, key=lambda x: (str(type(x)), x))
    except TypeError:
        return sorted(items, key=lambda x: (str(type(x)), repr(x)))


def compare_objects(ref: Any, sub: Any, **options: Any) -> MatchResult:
    """Compare a reference object with a submitted one under DSEval matcher ``options``.

    Raises ValueError on an unknown option name (loaders validate options up front).
    """
    return _Matcher(options)(ref, sub)
