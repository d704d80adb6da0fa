"""Properties of the join guard on random frames: pandas' result is untouched, and the
unmatched-row counts agree with a ground truth computed independently (`isin`)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from stateguard.audit.joinguard import JoinGuard

keys = st.lists(st.one_of(st.integers(0, 6), st.none()), min_size=0, max_size=25)


def _frame(values: list[int | None], col: str) -> pd.DataFrame:
    k = pd.array(values, dtype="Int64") if values else pd.array([], dtype="Int64")
    return pd.DataFrame({"k": k, col: np.arange(len(values))})


@settings(max_examples=120, deadline=None)
@given(
    left=keys,
    right=keys,
    how=st.sampled_from(["inner", "left", "right", "outer"]),
    sort=st.booleans(),
    use_indexers=st.booleans(),
)
def test_result_untouched_and_unmatched_rows_exact(
    left: list[int | None], right: list[int | None], how: str, sort: bool, use_indexers: bool
) -> None:
    a, b = _frame(left, "a"), _frame(right, "b")
    plain = pd.merge(a, b, on="k", how=how, sort=sort)
    g = JoinGuard(None, use_indexers=use_indexers)
    g.install()
    try:
        guarded = pd.merge(a, b, on="k", how=how, sort=sort)
    finally:
        g.uninstall()
    assert pickle.dumps(guarded) == pickle.dumps(plain)
    (rec,) = g.records
    assert rec.check_error is None, rec.check_error
    # pandas matches a missing key with a missing key (isin does not, for Int64)
    left_hit = a["k"].isin(b["k"]) | (a["k"].isna() & bool(b["k"].isna().any()))
    right_hit = b["k"].isin(a["k"]) | (b["k"].isna() & bool(a["k"].isna().any()))
    left_unmatched = int((~left_hit).sum())
    right_unmatched = int((~right_hit).sum())
    if rec.left_unmatched is not None:
        assert rec.left_unmatched == left_unmatched
    if rec.right_unmatched is not None:
        assert rec.right_unmatched == right_unmatched
    if how in ("inner", "left"):
        assert rec.left_unmatched == left_unmatched
    kinds = {d.kind for d in rec.diagnostics}
    if how == "inner" and (left_unmatched or right_unmatched) and "key_mismatch" not in kinds:
        assert "dropped_rows" in kinds
    lc, rc = a["k"].value_counts(dropna=False), b["k"].value_counts(dropna=False)
    both = lc.index.intersection(rc.index)
    fan = bool(((lc[both] > 1) & (rc[both] > 1)).any())
    assert ("many_to_many" in kinds) == fan
