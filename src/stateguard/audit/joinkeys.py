"""How the rows of a merge matched: the facts every join rule reads.

Two ways to get them, with the same result type `MatchFacts`:

- `facts_from_indexers` reads the join indexers pandas itself computed for the
  merge (row positions of the left and right input for every output row, -1 for
  "no match"). Counting them is a few numpy passes over integer arrays, so the
  guard stays cheap on large merges; key values are only looked up for the rows
  a finding quotes.
- `facts_from_values` hashes the key values of both sides (value counts, NaN
  included, since pandas matches NaN with NaN). It is exact about distinct key
  values, which the overlap rules need, and serves when no indexers were seen.

Neither modifies its inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

INDEX = "<index>"
SAMPLE = 2_000
"""Rows whose key values are looked up to quote examples."""


@dataclass(frozen=True)
class Key:
    """The key of one side: names, and one array per key part, aligned with the rows."""

    names: tuple[str, ...]
    parts: tuple[pd.Series, ...]
    rows: int

    def at(self, positions: np.ndarray) -> list[Any]:
        """Key values (tuples for several parts) of the rows at `positions`."""
        cols = [p.iloc[positions].tolist() for p in self.parts]
        return cols[0] if len(cols) == 1 else list(zip(*cols, strict=True))

    def values(self) -> pd.Series:
        """Every row's key value (tuples for several parts): the exact, slower form."""
        if len(self.parts) == 1:
            return self.parts[0].reset_index(drop=True)
        return pd.Series(list(zip(*(p.tolist() for p in self.parts), strict=True)), dtype=object)

    @property
    def dtype(self) -> str:
        """dtype of the key (``a, b`` for several parts)."""
        return ", ".join(str(p.dtype) for p in self.parts)


def key_of(frame: pd.DataFrame, spec: Sequence[Any], use_index: bool) -> Key:
    """The key of `frame`: its index, or the columns / arrays / index levels in `spec`."""
    rows = len(frame)
    if use_index:
        idx = frame.index
        if isinstance(idx, pd.MultiIndex):
            levels = tuple(
                pd.Series(idx.get_level_values(i), copy=False) for i in range(idx.nlevels)
            )
            return Key((INDEX,), levels, rows)
        return Key((INDEX,), (pd.Series(idx, copy=False),), rows)
    parts: list[pd.Series] = []
    names: list[str] = []
    for k in spec:
        if isinstance(k, (pd.Series, pd.Index, np.ndarray, list)):
            parts.append(pd.Series(np.asarray(k) if isinstance(k, list) else k, copy=False))
            names.append(str(getattr(k, "name", None) or "<array>"))
        elif k in frame.columns:
            parts.append(frame[k])
            names.append(str(k))
        else:  # an index level name
            parts.append(pd.Series(frame.index.get_level_values(k), copy=False))
            names.append(str(k))
    return Key(tuple(names), tuple(parts), rows)


@dataclass(frozen=True)
class Missing:
    """Rows of one side without a match, with example key values."""

    rows: int = 0
    examples: tuple[Any, ...] = ()
    """Distinct key values of unmatched rows, in row order."""
    complete: bool = True
    """True when `examples` are all the distinct unmatched key values."""


@dataclass(frozen=True)
class MatchFacts:
    """What matched: unmatched rows per side, key uniqueness, many-to-many fan-out."""

    left: Missing | None
    """None: not computed (not needed for this join type)."""
    right: Missing | None
    left_unique: bool | None
    """No key value that found a match repeats on the left (None: not computed)."""
    right_unique: bool | None
    fanout: tuple[tuple[Any, int, int], ...] = ()
    """(key value, left rows, right rows) for key values repeated on both sides."""
    fanout_rows: int = 0
    """Result rows produced by those key values."""
    fanout_keys: int = 0
    right_repeats: tuple[tuple[Any, int], ...] = ()
    """Matched key values held once on the left and repeated on the right, with their
    right row counts."""
    right_repeat_rows: int = 0
    """Right rows whose key repeats (among matched keys)."""
    distinct: tuple[int, int, int] | None = None
    """(left, right, common) distinct key values; only from `facts_from_values`."""
    distinct_values: tuple[pd.Index, pd.Index] | None = field(default=None, compare=False)

    @property
    def matched_share(self) -> float:
        """Share of matched distinct keys on the side with fewer (1.0 when unknown)."""
        if self.distinct is None:
            return 1.0
        nl, nr, common = self.distinct
        return common / min(nl, nr) if nl and nr else 1.0


def _distinct(values: list[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(_hashable(v) for v in values))


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return v


def facts_from_indexers(
    left: Key,
    right: Key,
    lidx: np.ndarray | None,
    ridx: np.ndarray | None,
    *,
    how: str,
) -> MatchFacts:
    """Facts from pandas' join indexers (None: every row once, in order).

    A left join keeps every left row at least once, so an output as long as the
    left input holds each left row exactly once: the right key is unique among
    matches and the unmatched left rows are the -1 entries of the right indexer.
    The right side's own facts are not needed then (and stay None). Likewise for
    a right join.

    Only byte-sized scatters in the common case: a left row seen in as many
    output rows as there are distinct left rows means no left row matched twice,
    so the right key is unique among matches (and the other way round). Counts
    per row are computed only when both sides repeat, to measure the fan-out.
    """
    if how == "left" and ridx is not None and (lidx is None or len(lidx) == left.rows):
        return _preserved_once(left, lidx, ridx)
    if how == "right" and lidx is not None and (ridx is None or len(ridx) == right.rows):
        flipped = _preserved_once(right, ridx, lidx)
        return MatchFacts(left=None, right=flipped.left, left_unique=True, right_unique=None)
    if lidx is None or ridx is None:
        # one side in order, each row exactly once: the other side's key never
        # repeats among matches, so there is no fan-out to measure
        return _one_side_in_order(left, right, lidx, ridx)
    if how != "inner":  # outer rows carry -1 on the side without a match
        li, ri = _matched_pairs(lidx, ridx)
    else:
        li, ri = lidx, ridx
    lseen, lunique_rows = _seen(li, left.rows)
    rseen, runique_rows = _seen(ri, right.rows)
    # a left row in several matched pairs means its key repeats on the right
    right_unique, left_unique = lunique_rows, runique_rows
    fanout: list[tuple[Any, int, int]] = []
    fanout_rows = fanout_keys = 0
    if not left_unique and not right_unique:
        lmult = np.bincount(li, minlength=left.rows)
        rmult = np.bincount(ri, minlength=right.rows)
        mask = (lmult[li] > 1) & (rmult[ri] > 1)
        fanout_rows = int(np.count_nonzero(mask))
        if fanout_rows:
            sel = np.flatnonzero(mask)[:SAMPLE]
            seen: dict[Any, tuple[int, int]] = {}
            for key, p, q in zip(left.at(li[sel]), li[sel], ri[sel], strict=True):
                seen.setdefault(_hashable(key), (int(rmult[q]), int(lmult[p])))
            fanout_keys = len(seen)
            fanout = [(k, n_l, n_r) for k, (n_l, n_r) in seen.items()]
    repeats: list[tuple[Any, int]] = []
    repeat_rows = 0
    if not right_unique:
        # left rows matching several right rows whose key occurs once on the left: the
        # right side repeats a key the left side holds once
        lmult = np.bincount(li, minlength=left.rows)
        rmult = np.bincount(ri, minlength=right.rows)
        rows = np.unique(li[(lmult[li] > 1) & (rmult[ri] == 1)])
        repeat_rows = int(lmult[rows].sum())
        keys = left.at(rows[:SAMPLE])
        repeats = sorted(
            ((_hashable(k), int(lmult[p])) for k, p in zip(keys, rows[:SAMPLE], strict=True)),
            key=lambda t: -t[1],
        )
    return MatchFacts(
        left=_missing(left, lseen),
        right=_missing(right, rseen),
        left_unique=left_unique,
        right_unique=right_unique,
        fanout=tuple(sorted(fanout, key=lambda t: -t[1] * t[2])),
        fanout_rows=fanout_rows,
        fanout_keys=fanout_keys,
        right_repeats=tuple(repeats),
        right_repeat_rows=repeat_rows,
    )


def _preserved_once(kept: Key, kept_idx: np.ndarray | None, other_idx: np.ndarray) -> MatchFacts:
    """`kept` is the preserved side of a left join, each of its rows once (in the order
    `kept_idx` gives, None: in order); `other_idx` the other side's positions."""
    if not len(other_idx) or other_idx.min() >= 0:  # one pass, no mask: all matched
        return MatchFacts(left=Missing(), right=None, left_unique=None, right_unique=True)
    matched = other_idx >= 0
    if kept_idx is not None:  # e.g. sort=True: output rows are a permutation of kept rows
        seen = np.zeros(kept.rows, dtype=bool)
        seen[kept_idx[matched]] = True
        matched = seen
    left = _missing(kept, matched)
    return MatchFacts(left=left, right=None, left_unique=None, right_unique=True)


def _one_side_in_order(
    left: Key, right: Key, lidx: np.ndarray | None, ridx: np.ndarray | None
) -> MatchFacts:
    """Facts when at least one indexer is None (that side: every row once, in order)."""
    if lidx is None and ridx is None:  # row i pairs with row i
        return MatchFacts(left=Missing(), right=Missing(), left_unique=True, right_unique=True)
    if lidx is None:
        assert ridx is not None
        # output row i is left row i; ridx[i] < 0 means it found no match
        lseen = ridx >= 0
        rseen, left_unique = _seen(ridx[lseen] if not lseen.all() else ridx, right.rows)
        return MatchFacts(
            left=_missing(left, lseen),
            right=_missing(right, rseen),
            left_unique=left_unique,
            right_unique=True,
        )
    flipped = _one_side_in_order(right, left, ridx, lidx)
    return MatchFacts(
        left=flipped.right,
        right=flipped.left,
        left_unique=flipped.right_unique,
        right_unique=flipped.left_unique,
    )


def _matched_pairs(lidx: np.ndarray, ridx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop output rows without a match on one side (-1 in that side's indexer)."""
    keep = (lidx >= 0) & (ridx >= 0)
    if keep.all():
        return lidx, ridx
    return lidx[keep], ridx[keep]


def _seen(idx: np.ndarray, rows: int) -> tuple[np.ndarray, bool]:
    """Which rows appear among matched pairs, and whether each appears once."""
    seen = np.zeros(rows, dtype=bool)
    seen[idx] = True
    return seen, int(np.count_nonzero(seen)) == len(idx)


_CHUNK = 1 << 16


def _first_unseen(seen: np.ndarray, k: int) -> np.ndarray:
    """Positions of the first `k` False entries, scanning in chunks (a merge that drops
    half of 1e6 rows needs one chunk, not a full pass that lists every unmatched row)."""
    found: list[np.ndarray] = []
    got = 0
    for start in range(0, len(seen), _CHUNK):
        hit = np.flatnonzero(~seen[start : start + _CHUNK])[: k - got]
        if len(hit):
            found.append(hit + start)
            got += len(hit)
            if got >= k:
                break
    return np.concatenate(found) if found else np.empty(0, dtype=np.intp)


def _missing(key: Key, seen: np.ndarray) -> Missing:
    unmatched = key.rows - int(np.count_nonzero(seen))
    if not unmatched:
        return Missing()
    rows = _first_unseen(seen, SAMPLE)
    return Missing(
        rows=unmatched,
        examples=_distinct(key.at(rows)),
        complete=unmatched <= SAMPLE,
    )


def facts_from_values(left: Key, right: Key) -> MatchFacts:
    """Exact facts from the key values of both sides (hashes every key)."""
    lc = left.values().value_counts(dropna=False, sort=False)
    rc = right.values().value_counts(dropna=False, sort=False)
    common = lc.index.intersection(rc.index, sort=False)
    lcm, rcm = lc.loc[common], rc.loc[common]
    both = (lcm > 1) & (rcm > 1)
    fan = sorted(
        ((k, int(lcm[k]), int(rcm[k])) for k in common[both.to_numpy()]),
        key=lambda t: -t[1] * t[2],
    )
    left_unique = bool((lcm <= 1).all())
    rep = rcm[(rcm > 1) & (lcm == 1)]
    repeats = sorted(((k, int(n)) for k, n in rep.items()), key=lambda t: -t[1])
    return MatchFacts(
        right_repeats=tuple(repeats),
        right_repeat_rows=sum(n for _, n in repeats),
        left=_missing_from_counts(lc, common),
        right=_missing_from_counts(rc, common),
        left_unique=left_unique,
        right_unique=bool((rcm <= 1).all()),
        fanout=tuple(fan),
        fanout_rows=sum(a * b for _, a, b in fan),
        fanout_keys=len(fan),
        distinct=(len(lc), len(rc), len(common)),
        distinct_values=(lc.index, rc.index),
    )


def _missing_from_counts(counts: pd.Series, common: pd.Index) -> Missing:
    missing = counts.index.difference(common, sort=False)
    if not len(missing):
        return Missing()
    return Missing(
        rows=int(counts.loc[missing].sum()),
        examples=_distinct(list(missing[:SAMPLE])),
        complete=len(missing) <= SAMPLE,
    )
