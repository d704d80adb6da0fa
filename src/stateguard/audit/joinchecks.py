"""Pure checks of one merge/join/concat: frames and arguments in, a `JoinRecord` out.

Nothing here touches a kernel or a namespace; `joinguard` calls these functions
inside the kernel after the real pandas call returned, and tests call them
directly. Every function reads its inputs and never modifies them.

Key facts are computed from value counts of the key on each side (NaN keys
included, since pandas matches NaN with NaN): unmatched rows, uniqueness, and
the key values that repeat on both sides (the source of a many-to-many fan-out).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from stateguard.audit.diagnostics import FrameRef, JoinDiagnostic, JoinRecord

MAX_EXAMPLES = 5
"""Key values quoted in one diagnostic."""

LOW_OVERLAP = 0.2
"""Below this share of matched distinct keys (on the smaller side), keys barely overlap."""

INDEX = "<index>"


@dataclass(frozen=True)
class Named:
    """A frame with the user names bound to it."""

    frame: Any
    names: tuple[str, ...] = ()

    def ref(self) -> FrameRef:
        """Shape and names as a `FrameRef`."""
        rows, cols = _shape(self.frame)
        return FrameRef(names=self.names, rows=rows, columns=cols)


def _shape(obj: Any) -> tuple[int, int]:
    if isinstance(obj, pd.DataFrame):
        return obj.shape
    if isinstance(obj, pd.Series):
        return len(obj), 1
    return len(obj), 0


def _label(n: Named) -> str:
    return n.ref().label


def _examples(values: Sequence[Any]) -> tuple[str, ...]:
    vals = list(values)
    with contextlib.suppress(TypeError):
        vals = sorted(vals)
    return tuple(repr(_plain(v)) for v in vals[:MAX_EXAMPLES])


def _plain(v: Any) -> Any:
    """numpy scalars as Python scalars, so reprs read `2019`, not `np.int64(2019)`."""
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    item = getattr(v, "item", None)
    if callable(item):
        try:
            return item()
        except (ValueError, TypeError):
            return v
    return v


def _quote(keys: Sequence[str]) -> str:
    return ", ".join(f"`{k}`" for k in keys)


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


# -- keys -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Side:
    names: tuple[str, ...]
    """Key column names (or `INDEX`, or ``<array>``)."""
    values: pd.Series
    """One hashable value per row (tuples for multi-column keys)."""


def _key_values(frame: pd.DataFrame, spec: list[Any], use_index: bool) -> _Side:
    if use_index:
        idx = frame.index
        if isinstance(idx, pd.MultiIndex):
            return _Side((INDEX,), pd.Series(list(idx), dtype=object))
        return _Side((INDEX,), pd.Series(idx.to_numpy(), copy=False))
    cols: list[pd.Series] = []
    names: list[str] = []
    for k in spec:
        if isinstance(k, (pd.Series, pd.Index)) or hasattr(k, "__array__"):
            cols.append(pd.Series(pd.Index(k).to_numpy(), copy=False))
            names.append(str(getattr(k, "name", None) or "<array>"))
        elif k in frame.columns:
            cols.append(frame[k].reset_index(drop=True))
            names.append(str(k))
        else:  # an index level name
            cols.append(pd.Series(frame.index.get_level_values(k).to_numpy(), copy=False))
            names.append(str(k))
    if len(cols) == 1:
        return _Side(tuple(names), cols[0])
    return _Side(tuple(names), pd.Series(list(zip(*cols, strict=True)), dtype=object))


@dataclass(frozen=True)
class _KeyFacts:
    left_counts: pd.Series
    right_counts: pd.Series
    common: pd.Index

    @property
    def left_unmatched(self) -> int:
        return int(self.left_counts.sum() - self.left_counts.loc[self.common].sum())

    @property
    def right_unmatched(self) -> int:
        return int(self.right_counts.sum() - self.right_counts.loc[self.common].sum())

    def missing(self, side: str) -> pd.Index:
        counts = self.left_counts if side == "left" else self.right_counts
        return counts.index.difference(self.common, sort=False)


def _facts(left: _Side, right: _Side) -> _KeyFacts:
    lc = left.values.value_counts(dropna=False, sort=False)
    rc = right.values.value_counts(dropna=False, sort=False)
    common = lc.index.intersection(rc.index, sort=False)
    return _KeyFacts(lc, rc, common)


# -- merge / join -----------------------------------------------------------------


def check_merge(
    left: Named,
    right: Named,
    result: Any,
    *,
    how: str = "inner",
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    left_index: bool = False,
    right_index: bool = False,
    operation: str = "merge",
) -> JoinRecord:
    """Check one merge (or `DataFrame.join`, given as the equivalent merge)."""
    lframe, rframe = left.frame, right.frame
    if isinstance(rframe, pd.Series):
        rframe = rframe.to_frame()
    inputs = (left.ref(), right.ref())
    out_rows = len(result)
    base: dict[str, Any] = {
        "operation": operation,
        "how": how,
        "inputs": inputs,
        "output_rows": out_rows,
    }
    if how == "cross":
        return JoinRecord(**base, diagnostics=_cross(left, right, out_rows))
    lspec, rspec = _as_list(on or left_on), _as_list(on or right_on)
    if not (lspec or rspec or left_index or right_index):
        common = [c for c in lframe.columns if c in set(rframe.columns)]
        lspec = rspec = common
    lside = _key_values(lframe, lspec, left_index and not lspec)
    rside = _key_values(rframe, rspec, right_index and not rspec)
    facts = _facts(lside, rside)
    lunique = bool(len(facts.left_counts) == len(lside.values))
    runique = bool(len(facts.right_counts) == len(rside.values))
    found: list[JoinDiagnostic] = []
    found += _positional(left, right, lframe, rframe, lside, rside)
    found += _fan_out(left, right, lside, facts, out_rows)
    overlap = _overlap(left, right, lside, rside, facts, how)
    found += overlap
    if not any(d.kind in ("key_mismatch", "key_format") for d in overlap):
        found += _losses(left, right, lside, rside, facts, how)
    return JoinRecord(
        **base,
        left_keys=lside.names,
        right_keys=rside.names,
        left_unique=lunique,
        right_unique=runique,
        left_unmatched=facts.left_unmatched,
        right_unmatched=facts.right_unmatched,
        diagnostics=tuple(found),
    )


def _cross(left: Named, right: Named, out_rows: int) -> tuple[JoinDiagnostic, ...]:
    nl, nr = len(left.frame), len(right.frame)
    if nl <= 1 or nr <= 1:
        return ()  # broadcasting one row is not a pairing
    return (
        JoinDiagnostic(
            kind="cross_product",
            severity="error",
            side="both",
            rows=out_rows,
            message=(
                f"{_label(left)} and {_label(right)} were merged with no key (how='cross'); "
                f"the result is their {nl}×{nr} cross product ({out_rows} rows)"
            ),
        ),
    )


def _positional(
    left: Named, right: Named, lframe: Any, rframe: Any, lside: _Side, rside: _Side
) -> list[JoinDiagnostic]:
    """Rows paired by position (two default indexes) although a shared column disagrees."""
    if lside.names != (INDEX,) or rside.names != (INDEX,):
        return []
    return _disagreeing_pairing(left, right, lframe, rframe, "joined on their indexes")


def _disagreeing_pairing(
    left: Named, right: Named, lframe: Any, rframe: Any, how_said: str
) -> list[JoinDiagnostic]:
    if not (_default_index(lframe) and _default_index(rframe)):
        return []
    shared = [c for c in lframe.columns if c in set(rframe.columns)]
    n = min(len(lframe), len(rframe))
    for col in shared:
        a = lframe[col].iloc[:n].reset_index(drop=True)
        b = rframe[col].iloc[:n].reset_index(drop=True)
        try:
            differ = int((~((a == b) | (a.isna() & b.isna()))).sum())
        except (TypeError, ValueError):
            continue
        if differ:
            return [
                JoinDiagnostic(
                    kind="positional_pairing",
                    severity="error",
                    side="both",
                    rows=differ,
                    columns=(str(col),),
                    message=(
                        f"{_label(left)} and {_label(right)} were {how_said}, which are plain "
                        f"row positions (0..n-1), so rows were paired by position, not by a key: "
                        f"both have column `{col}` and it disagrees in {differ} of {n} paired "
                        f"rows; merge on `{col}` instead"
                    ),
                )
            ]
    return []


def _default_index(frame: Any) -> bool:
    idx = frame.index
    return isinstance(idx, pd.RangeIndex) and idx.start == 0 and idx.step == 1


def _fan_out(
    left: Named, right: Named, lside: _Side, facts: _KeyFacts, out_rows: int
) -> list[JoinDiagnostic]:
    lc = facts.left_counts.loc[facts.common]
    rc = facts.right_counts.loc[facts.common]
    both = (lc > 1) & (rc > 1)
    if not bool(both.any()):
        return []
    bad = facts.common[both.to_numpy()]
    produced = int((lc[both] * rc[both]).sum())
    worst = (lc[both] * rc[both]).sort_values(ascending=False).index[:MAX_EXAMPLES]
    detail = ", ".join(f"{_plain(k)!r}: {int(lc[k])}×{int(rc[k])} rows" for k in worst)
    keys = _quote(lside.names)
    return [
        JoinDiagnostic(
            kind="many_to_many",
            severity="error",
            side="both",
            rows=produced,
            keys=_examples(list(bad)),
            columns=lside.names,
            message=(
                f"key {keys} is unique in neither {_label(left)} nor {_label(right)}: "
                f"{len(bad)} key value(s) repeat on both sides ({detail}) and fan out into "
                f"{produced} of the {out_rows} result rows "
                f"(inputs: {len(left.frame)} and {len(right.frame)} rows)"
            ),
        )
    ]


def _overlap(
    left: Named,
    right: Named,
    lside: _Side,
    rside: _Side,
    facts: _KeyFacts,
    how: str,
) -> list[JoinDiagnostic]:
    """Keys that barely match: different types, or the same values written differently."""
    nl, nr = len(facts.left_counts), len(facts.right_counts)
    if not nl or not nr:
        return []
    matched = len(facts.common)
    if matched / min(nl, nr) >= LOW_OVERLAP:
        return []
    lkeys, rkeys = _quote(lside.names), _quote(rside.names)
    ldtype, rdtype = str(lside.values.dtype), str(rside.values.dtype)
    lex = _examples(list(facts.missing("left"))[: MAX_EXAMPLES * 4])
    rex = _examples(list(facts.missing("right"))[: MAX_EXAMPLES * 4])
    normalized = _normalized_matches(facts)
    base = (
        f"{matched} of {nl} distinct {lkeys} values of {_label(left)} match {rkeys} of "
        f"{_label(right)} (e.g. left {', '.join(lex[:3])}; right {', '.join(rex[:3])})"
    )
    if normalized > matched:
        return [
            JoinDiagnostic(
                kind="key_format",
                severity="error" if matched == 0 else "warning",
                side="both",
                keys=lex,
                columns=(*lside.names, *rside.names),
                message=(
                    f"join keys are written differently: {base}; after trimming spaces, "
                    f"case-folding and dropping leading zeros {normalized} would match"
                ),
            )
        ]
    kind_differs = _value_kind(lside.values) != _value_kind(rside.values)
    return [
        JoinDiagnostic(
            kind="key_mismatch",
            severity="error" if matched == 0 and how != "outer" else "warning",
            side="both",
            keys=lex,
            columns=(*lside.names, *rside.names),
            message=(
                f"join keys barely overlap: {base}"
                + (f"; the key types differ ({ldtype} vs {rdtype})" if kind_differs else "")
            ),
        )
    ]


def _value_kind(values: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(values):
        return "bool"
    if pd.api.types.is_numeric_dtype(values):
        return "number"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "datetime"
    sample = values.dropna().head(50)
    kinds = {type(v).__name__ for v in sample}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _norm(v: Any) -> Any:
    if isinstance(v, tuple):
        return tuple(_norm(x) for x in v)
    if isinstance(v, str):
        s = v.strip().casefold()
        return s.lstrip("0") or s
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return v


def _normalized_matches(facts: _KeyFacts) -> int:
    left = {_norm(_plain(v)) for v in facts.left_counts.index}
    right = {_norm(_plain(v)) for v in facts.right_counts.index}
    return len(left & right)


def _losses(
    left: Named,
    right: Named,
    lside: _Side,
    rside: _Side,
    facts: _KeyFacts,
    how: str,
) -> list[JoinDiagnostic]:
    """Rows an inner join dropped, and rows a left/right join left without a match."""
    out: list[JoinDiagnostic] = []
    sides = (
        ("left", left, right, lside, facts.left_unmatched),
        ("right", right, left, rside, facts.right_unmatched),
    )
    for side, this, other, key, lost in sides:
        if not lost:
            continue
        missing = facts.missing(side)
        examples = _examples(list(missing)[: MAX_EXAMPLES * 4])
        values = ", ".join(examples) + (" …" if len(missing) > MAX_EXAMPLES else "")
        total = len(this.frame)
        what = f"{_quote(key.names)} value(s) {values}"
        if how == "inner":
            out.append(
                JoinDiagnostic(
                    kind="dropped_rows",
                    severity="warning",
                    side=side,  # type: ignore[arg-type]
                    rows=lost,
                    keys=examples,
                    columns=key.names,
                    message=(
                        f"inner merge of {_label(left)} and {_label(right)} dropped {lost} of "
                        f"{total} {side} rows ({_label(this)}): {what} "
                        f"{'is' if len(missing) == 1 else 'are'} missing from the "
                        f"{'right' if side == 'left' else 'left'} side ({_label(other)})"
                    ),
                )
            )
        elif (how == "left" and side == "left") or (how == "right" and side == "right"):
            out.append(
                JoinDiagnostic(
                    kind="unmatched_keys",
                    severity="warning",
                    side=side,  # type: ignore[arg-type]
                    rows=lost,
                    keys=examples,
                    columns=key.names,
                    message=(
                        f"{how} merge: {lost} of {total} rows of {_label(this)} found no match "
                        f"in {_label(other)} ({what}); their {_label(other)} columns are null"
                    ),
                )
            )
    return out


# -- concat -------------------------------------------------------------------------


def check_concat(
    objs: Sequence[Named], result: Any, *, axis: int = 0, join: str = "outer"
) -> JoinRecord:
    """Check one `pd.concat` of frames (Series inputs only count rows)."""
    frames = [o for o in objs if isinstance(o.frame, pd.DataFrame)]
    base: dict[str, Any] = {
        "operation": "concat",
        "how": join,
        "axis": axis,
        "inputs": tuple(o.ref() for o in objs),
        "output_rows": len(result),
    }
    if axis in (1, "columns"):
        found = _concat_columns(frames, join)
        return JoinRecord(**{**base, "axis": 1}, diagnostics=tuple(found))
    found = []
    if len(frames) >= 2:
        all_cols: list[Any] = []
        for f in frames:
            all_cols.extend(c for c in f.frame.columns if c not in all_cols)
        missing = {
            str(c): [f for f in frames if c not in set(f.frame.columns)] for c in all_cols
        }
        missing = {c: fs for c, fs in missing.items() if fs}
        if missing and join == "outer":
            parts = [
                f"`{c}` is missing from {', '.join(_label(f) for f in fs)} "
                f"({sum(len(f.frame) for f in fs)} rows)"
                for c, fs in list(missing.items())[:MAX_EXAMPLES]
            ]
            rows = sum(len(f.frame) for fs in missing.values() for f in fs)
            found.append(
                JoinDiagnostic(
                    kind="union_fills_nulls",
                    severity="warning",
                    rows=rows,
                    columns=tuple(missing),
                    message=(
                        f"concat of {', '.join(_label(f) for f in frames)} filled missing "
                        f"columns with nulls: {'; '.join(parts)}"
                    ),
                )
            )
        elif missing:
            found.append(
                JoinDiagnostic(
                    kind="union_drops_columns",
                    severity="warning",
                    columns=tuple(missing),
                    message=(
                        f"concat(join='inner') of {', '.join(_label(f) for f in frames)} "
                        f"dropped columns not present in every input: {_quote(list(missing))}"
                    ),
                )
            )
    return JoinRecord(**base, diagnostics=tuple(found))


def _concat_columns(frames: Sequence[Named], join: str) -> list[JoinDiagnostic]:
    if len(frames) < 2:
        return []
    first = frames[0]
    found: list[JoinDiagnostic] = []
    for other in frames[1:]:
        found += _disagreeing_pairing(
            first, other, first.frame, other.frame, "concatenated side by side (axis=1)"
        )
        a, b = first.frame.index, other.frame.index
        if a.equals(b):
            continue
        only_a = a.difference(b, sort=False)
        only_b = b.difference(a, sort=False)
        if not len(only_a) and not len(only_b):
            continue
        effect = "dropped" if join == "inner" else "filled with nulls"
        found.append(
            JoinDiagnostic(
                kind="index_misaligned",
                severity="warning",
                side="both",
                rows=len(only_a) + len(only_b),
                keys=_examples(list(only_a) + list(only_b)),
                message=(
                    f"concat(axis=1) aligns rows by index: {len(only_a)} index label(s) of "
                    f"{_label(first)} are not in {_label(other)} and {len(only_b)} of "
                    f"{_label(other)} are not in {_label(first)}; those rows were {effect}"
                ),
            )
        )
    return found
