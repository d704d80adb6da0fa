"""Each join-guard rule on plain frames: a case it must flag and a near miss it must not.

These run the pure checks (`stateguard.audit.joinchecks`) through an installed
`JoinGuard` without IPython, so they exercise the same wrappers as the kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import pytest

from stateguard.audit.diagnostics import JoinRecord
from stateguard.audit.joinguard import JoinGuard, JoinRejectedError


@pytest.fixture(params=[True, False], ids=["indexers", "key-values"])
def guard(request: pytest.FixtureRequest) -> Iterator[JoinGuard]:
    """A guard outside IPython, on pandas' join indexers and on the exact key-value path."""
    g = JoinGuard(None, use_indexers=request.param)
    g.install()
    try:
        yield g
    finally:
        g.uninstall()


def _one(guard: JoinGuard, call: Callable[[], object]) -> JoinRecord:
    guard.records.clear()
    call()
    assert len(guard.records) == 1, guard.records
    rec = guard.records[0]
    assert rec.check_error is None, rec.check_error
    return rec


def _kinds(rec: JoinRecord) -> set[str]:
    return {d.kind for d in rec.diagnostics}


A = pd.DataFrame({"country": list("ABCDE"), "gdp": [5, 4, 3, 2, 1]})
B = pd.DataFrame({"country": list("EDCBA"), "pop": [9, 8, 7, 6, 5]})
SALES = pd.DataFrame({"year": [2018, 2019, 2020, 2021] * 3, "v": range(12)})
TARGETS = pd.DataFrame({"year": [2018, 2020, 2021], "t": [1, 2, 3]})
TARGETS_ALL = pd.DataFrame({"year": [2018, 2019, 2020, 2021], "t": [1, 2, 3, 4]})
TARGETS_DUP = pd.DataFrame({"year": [2018, 2019, 2020, 2021, 2019], "t": [1, 2, 3, 4, 2]})


# (id, flagged call, expected kind, near-miss call that must not produce that kind)
CASES: list[tuple[str, Callable[[], object], str, Callable[[], object]]] = [
    (
        "cross",
        lambda: pd.merge(A, B, how="cross"),
        "cross_product",
        lambda: pd.merge(A, B.head(1), how="cross"),  # broadcasting a single row
    ),
    (
        "positional-concat",
        lambda: pd.concat([A, B], axis=1),
        "positional_pairing",
        lambda: pd.concat([A, A[["country"]].assign(x=1)], axis=1),  # shared column agrees
    ),
    (
        "positional-join",
        lambda: A.join(B, suffixes=("", "_r")),
        "positional_pairing",
        lambda: A.set_index("country").join(B.set_index("country")),  # a real key index
    ),
    (
        "many-to-many",
        lambda: SALES.merge(SALES, on="year"),
        "many_to_many",
        lambda: SALES.merge(TARGETS_ALL, on="year"),  # many-to-one
    ),
    (
        "near-unique-lookup",
        lambda: SALES.drop_duplicates("year").merge(TARGETS_DUP, on="year"),
        "near_unique_key",
        lambda: TARGETS_ALL.merge(SALES, on="year"),  # one-to-many: every key repeats
    ),
    (
        "inner-drops-a-year",
        lambda: SALES.merge(TARGETS, on="year"),
        "dropped_rows",
        lambda: SALES.merge(TARGETS_ALL, on="year"),
    ),
    (
        "left-unmatched",
        lambda: SALES.merge(TARGETS, on="year", how="left"),
        "unmatched_keys",
        lambda: SALES.merge(TARGETS, on="year", how="outer"),  # nothing dropped by design
    ),
    (
        "key-format",
        lambda: pd.DataFrame({"s": ["CA", "NY", "TX"]}).merge(
            pd.DataFrame({"s": ["ca ", "ny", "tx"], "y": [1, 2, 3]}), on="s"
        ),
        "key_format",
        lambda: pd.DataFrame({"s": ["CA", "NY", "TX"]}).merge(
            pd.DataFrame({"s": ["CA", "NY", "TX"], "y": [1, 2, 3]}), on="s"
        ),
    ),
    (
        "key-mismatch",
        lambda: pd.DataFrame({"s": ["CA", "NY", "TX"]}).merge(
            pd.DataFrame({"s": ["California", "New York", "Texas"], "y": [1, 2, 3]}), on="s"
        ),
        "key_mismatch",
        lambda: pd.DataFrame({"s": ["CA", "NY", "TX"]}).merge(
            pd.DataFrame({"s": ["CA", "New York", "Texas"], "y": [1, 2, 3]}), on="s"
        ),  # one of three keys matches: thin, but above the "barely" threshold
    ),
    (
        "union-nulls",
        lambda: pd.concat([A, B]),
        "union_fills_nulls",
        lambda: pd.concat([A, A]),
    ),
    (
        "union-drops",
        lambda: pd.concat([A, B], join="inner"),
        "union_drops_columns",
        lambda: pd.concat([B, B], join="inner"),
    ),
    (
        "index-misaligned",
        lambda: pd.concat([A.set_index("country"), B.set_index("country").head(3)], axis=1),
        "index_misaligned",
        lambda: pd.concat([A.set_index("country"), B.set_index("country")], axis=1),
    ),
]


@pytest.mark.parametrize(
    ("flagged", "kind", "near_miss"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rule_flags_and_near_miss_passes(
    guard: JoinGuard, flagged: Callable[[], object], kind: str, near_miss: Callable[[], object]
) -> None:
    assert kind in _kinds(_one(guard, flagged))
    assert kind not in _kinds(_one(guard, near_miss))


@pytest.mark.parametrize("use_indexers", [True, False], ids=["indexers", "key-values"])
def test_clean_many_to_one_merge_has_no_finding(use_indexers: bool) -> None:
    g = JoinGuard(None, use_indexers=use_indexers)
    g.install()
    try:
        rec = _one(g, lambda: SALES.merge(TARGETS_ALL, on="year"))
        assert rec.diagnostics == ()
        assert (rec.left_unique, rec.right_unique) == (False, True)
        assert (rec.left_unmatched, rec.right_unmatched) == (0, 0)
        assert rec.output_rows == 12 and [i.rows for i in rec.inputs] == [12, 4]
        assert rec.facts_from == ("indexers" if use_indexers else "key values")
        left = _one(g, lambda: SALES.merge(TARGETS_ALL, on="year", how="left"))
        assert left.diagnostics == () and left.right_unique is True
        assert left.left_unmatched == 0
    finally:
        g.uninstall()


def test_dropped_year_is_named_with_counts(guard: JoinGuard) -> None:
    rec = _one(guard, lambda: SALES.merge(TARGETS, on="year"))
    (d,) = rec.diagnostics
    assert d.kind == "dropped_rows" and d.side == "left" and d.rows == 3
    assert d.keys == ("2019",)
    assert "dropped 3 of 12 left rows" in d.message
    assert "2019 is missing from the right side" in d.message


def test_cross_product_message_gives_the_shape(guard: JoinGuard) -> None:
    rec = _one(guard, lambda: pd.merge(A, B, how="cross"))
    (d,) = rec.diagnostics
    assert d.severity == "error" and "5×5 cross product (25 rows)" in d.message


def test_many_to_many_reports_multiplicity(guard: JoinGuard) -> None:
    left = pd.DataFrame({"k": [1, 1, 2], "a": [1, 2, 3]})
    right = pd.DataFrame({"k": [1, 1, 1, 2], "b": [1, 2, 3, 4]})
    rec = _one(guard, lambda: left.merge(right, on="k"))
    (d,) = [d for d in rec.diagnostics if d.kind == "many_to_many"]
    assert d.rows == 6 and d.keys == ("1",)
    assert "1: 2×3 rows" in d.message


def test_multi_column_and_left_on_right_on_keys(guard: JoinGuard) -> None:
    left = pd.DataFrame({"y": [2020, 2020, 2021], "r": ["N", "S", "N"], "v": [1, 2, 3]})
    right = pd.DataFrame({"yr": [2020, 2020], "reg": ["N", "S"], "t": [1, 2]})
    rec = _one(guard, lambda: left.merge(right, left_on=["y", "r"], right_on=["yr", "reg"]))
    assert rec.left_keys == ("y", "r") and rec.right_keys == ("yr", "reg")
    (d,) = rec.diagnostics
    assert d.kind == "dropped_rows" and d.keys == ("(2021, 'N')",)


def test_nan_keys_match_each_other_as_in_pandas(guard: JoinGuard) -> None:
    left = pd.DataFrame({"k": [1.0, None], "a": [1, 2]})
    right = pd.DataFrame({"k": [1.0, None], "b": [1, 2]})
    rec = _one(guard, lambda: left.merge(right, on="k"))
    assert rec.output_rows == 2 and rec.diagnostics == ()


def test_reject_mode_raises_a_typed_error_naming_the_evidence() -> None:
    g = JoinGuard(None, mode="reject")
    g.install()
    try:
        with pytest.raises(JoinRejectedError, match=r"5×5 cross product") as info:
            pd.merge(A, B, how="cross")
        assert info.value.record.errors[0].kind == "cross_product"
        # warnings are not rejected
        assert len(SALES.merge(TARGETS, on="year")) == 9
    finally:
        g.uninstall()


def test_uninstall_restores_pandas() -> None:
    originals = (pd.merge, pd.concat, pd.DataFrame.merge, pd.DataFrame.join)
    g = JoinGuard(None)
    g.install()
    assert pd.merge is not originals[0]
    g.uninstall()
    assert (pd.merge, pd.concat, pd.DataFrame.merge, pd.DataFrame.join) == originals


def test_internal_calls_are_recorded_once(guard: JoinGuard) -> None:
    # DataFrame.join calls merge internally; only the outer call is a user choice
    rec = _one(guard, lambda: A.set_index("country").join(B.set_index("country")))
    assert rec.operation == "join"


def test_generator_input_to_concat_still_works(guard: JoinGuard) -> None:
    rec = _one(guard, lambda: pd.concat(f for f in (A, A)))
    assert rec.output_rows == 10


@pytest.mark.parametrize("sort", [False, True])
@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
@pytest.mark.parametrize("seed", range(6))
def test_indexer_facts_agree_with_key_value_facts(how: str, seed: int, sort: bool) -> None:
    rng = np.random.default_rng(seed)
    left = pd.DataFrame({"k": rng.integers(0, 12, 40), "a": rng.random(40)})
    right = pd.DataFrame({"k": rng.integers(4, 16, int(rng.integers(5, 30))), "b": 1.0})
    if seed % 2:  # unique right side: many-to-one
        right = right.drop_duplicates("k")
    found = []
    for use in (True, False):
        g = JoinGuard(None, use_indexers=use)
        g.install()
        try:
            found.append(_one(g, lambda: left.merge(right, on="k", how=how, sort=sort)))
        finally:
            g.uninstall()
    fast, exact = found
    assert fast.facts_from == "indexers" and exact.facts_from == "key values"
    assert [(d.kind, d.side, d.rows, d.keys) for d in fast.diagnostics] == [
        (d.kind, d.side, d.rows, d.keys) for d in exact.diagnostics
    ]
    for field in ("left_unmatched", "right_unmatched", "left_unique", "right_unique"):
        value = getattr(fast, field)
        assert value is None or value == getattr(exact, field), field
