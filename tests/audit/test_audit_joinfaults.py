"""Planting silent join faults, and scoring the guard on them (no model)."""

from __future__ import annotations

import ast

import pytest

from stateguard.audit.joinfaults import FAULT_KINDS, evaluate, fault_sites, plant

CELL = "m = sales.merge(targets, on='year', how='left')"

SETUP = """
import pandas as pd
sales = pd.DataFrame({'year': [2018, 2019, 2020, 2021] * 3, 'region': list('NNNSSSEEEWWW'),
                      'v': range(12)})
targets = pd.DataFrame({'year': [2018, 2019, 2020, 2021], 't': [1, 2, 3, 4]})
regions = pd.DataFrame({'region': list('NSEW'), 'name': ['north', 'south', 'east', 'west']})
"""


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("key_dropped", "m = sales.merge(targets, how='cross')"),
        ("how_inner", "m = sales.merge(targets, on='year')"),
        ("how_inner_written", "m = sales.merge(targets, on='year', how='inner')"),
        ("key_format", "' ' + _r['year'].astype(str)"),
        ("duplicate_key", "_r.iloc[list(range(len(_r))) + [0]])(targets)"),
    ],
)
def test_plant_rewrites_the_merge(kind: str, expected: str) -> None:
    out = plant(CELL, kind)  # type: ignore[arg-type]
    assert out is not None and expected in out


def test_plant_skips_cells_it_cannot_fault() -> None:
    assert plant("x = 1", "key_dropped") is None
    assert plant("m = a.merge(b, on='k')", "how_inner") is None  # already inner
    assert plant("m = a.merge(b, on='k', how='inner')", "how_inner") is None
    assert plant("m = pd.merge(a, b, 'left')", "key_dropped") is None  # how by position
    assert plant("m = a.merge(b, left_index=True, right_index=True)", "key_format") is None
    assert plant("def broken(:", "key_dropped") is None


def test_guard_flags_every_effective_fault_and_no_clean_merge() -> None:
    sessions = {
        "s": [
            SETUP,
            "m = sales.merge(targets, on='year', how='left')",
            "pd.merge(sales, regions, on='region')",
        ]
    }
    result = evaluate(sessions)
    assert result.clean_merges == 2 and result.false_alarms == 0
    # how_inner(_written) on a left merge that matched every row changes nothing: no fault
    assert result.without_effect == 2
    assert result.faults == 6 and result.flagged == 6 and result.fault_recall == 1.0
    by_fault = {(o.cell, o.fault): o for o in result.outcomes if o.fault}
    assert by_fault[(1, "key_dropped")].new_kinds == ("cross_product",)
    assert by_fault[(1, "key_format")].raised is not None  # int vs str: pandas refuses
    assert by_fault[(2, "key_format")].new_kinds == ("key_format",)
    assert "many_to_many" in by_fault[(1, "duplicate_key")].new_kinds
    assert set(result.recall_by_kind) <= set(FAULT_KINDS)


def test_a_warning_the_clean_cell_had_does_not_count_as_detection() -> None:
    sessions = {
        "s": [
            SETUP + "few = targets[targets.year != 2019]\n",
            "pd.merge(sales.drop_duplicates('year'), few, on='year')",
        ]
    }
    result = evaluate(sessions)
    (clean,) = [o for o in result.outcomes if o.fault is None]
    assert clean.kinds == ("dropped_rows",) and result.false_alarms == 1
    dup = next(o for o in result.outcomes if o.fault == "duplicate_key")
    assert "dropped_rows" not in dup.new_kinds


def test_an_inner_join_the_code_asks_for_is_a_note_and_the_default_one_an_alarm() -> None:
    stated = "pd.merge(sales.drop_duplicates('year'), few, on='year', how='inner')"
    sessions = {"s": [SETUP + "few = targets[targets.year != 2019]\n", stated]}
    result = evaluate(sessions)
    (clean,) = [o for o in result.outcomes if o.fault is None]
    assert clean.kinds == ("dropped_rows",) and clean.alarms == ()
    assert result.false_alarms == 0 and result.noted_clean == 1
    # the same merge left without how= (pandas' default inner) is an alarm
    outer = {
        "s": [
            SETUP + "few = targets[targets.year != 2019]\n",
            "pd.merge(sales.drop_duplicates('year'), few, on='year', how='outer')",
        ]
    }
    fault = next(o for o in evaluate(outer).outcomes if o.fault == "how_inner")
    assert fault.new_alarms == ("dropped_rows",) and fault.flagged


def test_fault_sites_are_per_call_and_keep_positions() -> None:
    cell = "a = 1\nm = x.merge(y, on='k', how='left')\nn = pd.merge(x, z, on='k')\n"
    sites = fault_sites(cell)
    kinds = [(k, c.lineno) for k, c, _ in sites]
    assert ("how_inner", 2) in kinds and ("how_inner", 3) not in kinds
    assert ("key_dropped", 3) in kinds and ("duplicate_key", 3) in kinds
    for _, call, new in sites:
        assert call.lineno in (2, 3) and ast.unparse(new) != ast.unparse(call)


def test_each_cells_question_weighs_its_row_loss() -> None:
    setup = SETUP + "few = targets[targets.year != 2019]\n"
    outer = "pd.merge(sales.drop_duplicates('year'), few, on='year', how='outer')"
    default = "pd.merge(sales.drop_duplicates('year'), few, on='year')"
    asked_all = {"s": [None, "Merge all rows of sales with few, where available"]}
    faults = {o.fault: o for o in evaluate({"s": [setup, outer]}, questions=asked_all).outcomes}
    assert faults["how_inner"].flagged and faults["how_inner_written"].flagged
    # the same written inner join, asked plainly: a stated choice, a note
    plain = {"s": [None, "Merge sales with few on year"]}
    faults = {o.fault: o for o in evaluate({"s": [setup, outer]}, questions=plain).outcomes}
    assert not faults["how_inner_written"].flagged
    # a clean default merge: a false alarm by the code alone, not when the question is plain
    assert evaluate({"s": [setup, default]}).false_alarms == 1
    assert evaluate({"s": [setup, default]}, questions=plain).false_alarms == 0
    assert evaluate({"s": [setup, default]}, questions=asked_all).false_alarms == 1
