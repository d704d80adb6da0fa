"""Pure checks of one merge/join/concat: frames and arguments in, a `JoinRecord` out.

Nothing here touches a kernel or a namespace; `joinguard` calls these functions
inside the kernel after the real pandas call returned, and tests call them
directly. Every function reads its inputs and never modifies them.

Row facts (unmatched rows, key uniqueness, many-to-many fan-out) come from
`stateguard.audit.joinkeys`: from pandas' own join indexers when the guard
captured them, else from the key values. Each rule is one small function from
those facts to zero or more `JoinDiagnostic`s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from stateguard.audit.diagnostics import FrameRef, JoinDiagnostic, JoinRecord
from stateguard.audit.joinkeys import (
    INDEX,
    Key,
    MatchFacts,
    facts_from_indexers,
    facts_from_values,
    key_of,
)

MAX_EXAMPLES = 5
"""Key values quoted in one diagnostic."""

NEAR_UNIQUE = 0.05
"""A right key with at most max(1, this share of its rows) repeated values is "nearly
unique": a lookup table with a stray duplicate, which silently duplicates left rows."""

LOW_OVERLAP = 0.2
"""Below this share of matched distinct keys (on the smaller side), keys barely overlap."""


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


def label(n: Named) -> str:
    """How a diagnostic names a frame: `name`, or <expression>."""
    return n.ref().label


def examples_of(values: Sequence[Any]) -> tuple[str, ...]:
    """Up to `MAX_EXAMPLES` values as reprs, sorted when they sort."""
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


def quote(keys: Sequence[str]) -> str:
    """Column names in backticks, comma-separated."""
    return ", ".join(f"`{k}`" for k in keys)


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


# -- merge / join -----------------------------------------------------------------

Indexers = tuple[Any, Any]
"""pandas' (left, right) join indexers for the merge, as `joinguard` captured them."""


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
    indexers: Indexers | None = None,
    how_stated: bool | None = None,
) -> JoinRecord:
    """Check one merge (or `DataFrame.join`, given as the equivalent merge).

    With `indexers` the row facts come from pandas' own join indexers (cheap);
    key values are hashed only when matches are so thin that the overlap rules
    need distinct keys, or when no indexers are given. `how_stated` records whether the
    call passed `how` itself (see `stateguard.audit.joinpolicy`).
    """
    lframe, rframe = left.frame, right.frame
    if isinstance(rframe, pd.Series):
        rframe = rframe.to_frame()
    out_rows = len(result)
    base: dict[str, Any] = {
        "operation": operation,
        "how": how,
        "how_stated": how_stated,
        "inputs": (left.ref(), right.ref()),
        "output_rows": out_rows,
    }
    if how == "cross":
        return JoinRecord(**base, diagnostics=_cross(left, right, out_rows))
    lspec, rspec = (
        _as_list(on if on is not None else left_on),
        _as_list(on if on is not None else right_on),
    )
    if not (lspec or rspec or left_index or right_index):
        common = [c for c in lframe.columns if c in set(rframe.columns)]
        lspec = rspec = common
    lkey = key_of(lframe, lspec, left_index and not lspec)
    rkey = key_of(rframe, rspec, right_index and not rspec)
    source = "key values"
    if indexers is not None:
        facts = facts_from_indexers(lkey, rkey, *indexers, how=how)
        source = "indexers"
        if _thin(facts, lkey, rkey):
            facts, source = facts_from_values(lkey, rkey), "key values"
    else:
        facts = facts_from_values(lkey, rkey)
    found: list[JoinDiagnostic] = []
    found += _positional(left, right, lframe, rframe, lkey, rkey)
    found += _fan_out(left, right, lkey, facts, out_rows)
    found += _near_unique(left, right, rkey, facts, how, out_rows)
    overlap = _overlap(left, right, lkey, rkey, facts, how)
    found += overlap
    if not overlap:
        found += _losses(left, right, lkey, rkey, facts, how)
    return JoinRecord(
        **base,
        left_keys=lkey.names,
        right_keys=rkey.names,
        left_unique=facts.left_unique,
        right_unique=facts.right_unique,
        left_unmatched=None if facts.left is None else facts.left.rows,
        right_unmatched=None if facts.right is None else facts.right.rows,
        facts_from=source,
        diagnostics=tuple(found),
    )


def _thin(facts: MatchFacts, lkey: Key, rkey: Key) -> bool:
    """Too few matched rows on both sides for the row facts alone to judge the keys."""
    if not lkey.rows or not rkey.rows:
        return False
    shares = [
        1 - m.rows / n
        for m, n in ((facts.left, lkey.rows), (facts.right, rkey.rows))
        if m is not None
    ]
    return bool(shares) and min(shares) < LOW_OVERLAP


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
                f"{label(left)} and {label(right)} were merged with no key (how='cross'); "
                f"the result is their {nl}×{nr} cross product ({out_rows} rows)"
            ),
        ),
    )


def _positional(
    left: Named, right: Named, lframe: Any, rframe: Any, lkey: Key, rkey: Key
) -> list[JoinDiagnostic]:
    """Rows paired by position (two default indexes) although a shared column disagrees."""
    if lkey.names != (INDEX,) or rkey.names != (INDEX,):
        return []
    return disagreeing_pairing(left, right, lframe, rframe, "joined on their indexes")


def disagreeing_pairing(
    left: Named, right: Named, lframe: Any, rframe: Any, how_said: str
) -> list[JoinDiagnostic]:
    """Two default (0..n-1) indexes paired row by row while a shared column disagrees."""
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
                        f"{label(left)} and {label(right)} were {how_said}, which are plain "
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
    left: Named, right: Named, lkey: Key, facts: MatchFacts, out_rows: int
) -> list[JoinDiagnostic]:
    if not facts.fanout_rows:
        return []
    shown = facts.fanout[:MAX_EXAMPLES]
    detail = ", ".join(f"{_plain(k)!r}: {a}×{b} rows" for k, a, b in shown)
    more = " …" if facts.fanout_keys > len(shown) else ""
    keys = quote(lkey.names)
    return [
        JoinDiagnostic(
            kind="many_to_many",
            severity="error",
            side="both",
            rows=facts.fanout_rows,
            keys=examples_of([k for k, _, _ in shown]),
            columns=lkey.names,
            message=(
                f"key {keys} is unique in neither {label(left)} nor {label(right)}: "
                f"{facts.fanout_keys} key value(s) repeat on both sides ({detail}{more}) and "
                f"fan out into {facts.fanout_rows} of the {out_rows} result rows "
                f"(inputs: {len(left.frame)} and {len(right.frame)} rows)"
            ),
        )
    ]


def _near_unique(
    left: Named, right: Named, rkey: Key, facts: MatchFacts, how: str, out_rows: int
) -> list[JoinDiagnostic]:
    """A lookup side unique but for a few key values: those left rows were duplicated."""
    if how not in ("inner", "left", "outer") or not facts.right_repeats or not rkey.rows:
        return []
    if len(facts.right_repeats) > max(1, NEAR_UNIQUE * rkey.rows):
        return []  # a genuine one-to-many relation, not a stray duplicate
    shown = facts.right_repeats[:MAX_EXAMPLES]
    extra = sum(n - 1 for _, n in facts.right_repeats)
    detail = ", ".join(f"{_plain(k)!r}: {n} rows" for k, n in shown)
    return [
        JoinDiagnostic(
            kind="near_unique_key",
            severity="warning",
            side="right",
            rows=extra,
            keys=examples_of([k for k, _ in shown]),
            columns=rkey.names,
            message=(
                f"key {quote(rkey.names)} of {label(right)} is unique except for "
                f"{len(facts.right_repeats)} value(s) ({detail}), so {extra} row(s) of "
                f"{label(left)} were duplicated ({out_rows} result rows)"
            ),
        )
    ]


def _overlap(
    left: Named, right: Named, lkey: Key, rkey: Key, facts: MatchFacts, how: str
) -> list[JoinDiagnostic]:
    """Keys that barely match: different types, or the same values written differently."""
    if facts.distinct is None or facts.matched_share >= LOW_OVERLAP:
        return []
    assert facts.left is not None and facts.right is not None  # the exact path sets both
    nl, _, matched = facts.distinct
    lnames, rnames = quote(lkey.names), quote(rkey.names)
    lex = examples_of(list(facts.left.examples))
    rex = examples_of(list(facts.right.examples))
    normalized = _normalized_matches(facts)
    base = (
        f"{matched} of {nl} distinct {lnames} values of {label(left)} match {rnames} of "
        f"{label(right)} (e.g. left {', '.join(lex[:3])}; right {', '.join(rex[:3])})"
    )
    if normalized > matched:
        return [
            JoinDiagnostic(
                kind="key_format",
                severity="error" if matched == 0 else "warning",
                side="both",
                keys=lex,
                columns=(*lkey.names, *rkey.names),
                message=(
                    f"join keys are written differently: {base}; after trimming spaces, "
                    f"case-folding and dropping leading zeros {normalized} would match"
                ),
            )
        ]
    differ = _value_kind(lkey) != _value_kind(rkey)
    return [
        JoinDiagnostic(
            kind="key_mismatch",
            severity="error" if matched == 0 and how != "outer" else "warning",
            side="both",
            keys=lex,
            columns=(*lkey.names, *rkey.names),
            message=(
                f"join keys barely overlap: {base}"
                + (f"; the key types differ ({lkey.dtype} vs {rkey.dtype})" if differ else "")
            ),
        )
    ]


def _value_kind(key: Key) -> str:
    kinds = []
    for part in key.parts:
        if pd.api.types.is_bool_dtype(part):
            kinds.append("bool")
        elif pd.api.types.is_numeric_dtype(part):
            kinds.append("number")
        elif pd.api.types.is_datetime64_any_dtype(part):
            kinds.append("datetime")
        else:
            found = {type(v).__name__ for v in part.dropna().head(50)}
            kinds.append(found.pop() if len(found) == 1 else "mixed")
    return ",".join(kinds)


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


def _normalized_matches(facts: MatchFacts) -> int:
    if facts.distinct_values is None:
        return 0
    lvals, rvals = facts.distinct_values
    left = {_norm(_plain(v)) for v in lvals}
    right = {_norm(_plain(v)) for v in rvals}
    return len(left & right)


def _losses(
    left: Named, right: Named, lkey: Key, rkey: Key, facts: MatchFacts, how: str
) -> list[JoinDiagnostic]:
    """Rows an inner join dropped, and rows a left/right join left without a match."""
    out: list[JoinDiagnostic] = []
    sides = (
        ("left", left, right, lkey, facts.left),
        ("right", right, left, rkey, facts.right),
    )
    for side, this, other, key, missing in sides:
        if missing is None or not missing.rows:
            continue
        examples = examples_of(list(missing.examples))
        many = len(missing.examples) > MAX_EXAMPLES or not missing.complete
        values = ", ".join(examples) + (" …" if many else "")
        plural = len(missing.examples) > 1 or not missing.complete
        total = len(this.frame)
        what = f"{quote(key.names)} value{'s' if plural else ''} {values}"
        if how == "inner":
            out.append(
                JoinDiagnostic(
                    kind="dropped_rows",
                    severity="warning",
                    side=side,  # type: ignore[arg-type]
                    rows=missing.rows,
                    keys=examples,
                    columns=key.names,
                    message=(
                        f"inner merge of {label(left)} and {label(right)} dropped "
                        f"{missing.rows} of {total} {side} rows ({label(this)}): {what} "
                        f"{'are' if plural else 'is'} missing from the "
                        f"{'right' if side == 'left' else 'left'} side ({label(other)})"
                    ),
                )
            )
        elif how == side:
            out.append(
                JoinDiagnostic(
                    kind="unmatched_keys",
                    severity="warning",
                    side=side,  # type: ignore[arg-type]
                    rows=missing.rows,
                    keys=examples,
                    columns=key.names,
                    message=(
                        f"{how} merge: {missing.rows} of {total} rows of {label(this)} found "
                        f"no match in {label(other)} ({what}); their {label(other)} columns "
                        f"are null"
                    ),
                )
            )
    return out
