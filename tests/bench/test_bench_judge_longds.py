"""Table tests of the LongDS judge rules."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from stateguard.bench.judges import Judgement, judge_longds, parse_number, tolerance_is_relative

# (id, gold, prediction, kwargs, expected correct)
CASES: list[tuple[str, dict[str, Any], Any, dict[str, Any], bool]] = [
    # requested fields only
    ("extra_fields_ignored", {"a": 1}, {"a": 1, "b": "noise"}, {}, True),
    (
        "missing_field_requested",
        {"alpha": 1, "beta": 2},
        {"alpha": 1},
        {"question": "What are alpha and beta?"},
        False,
    ),
    (
        "missing_unrequested_field",
        {"total": 5, "mean": 2},
        {"total": 5},
        {"question": "Total?"},
        True,
    ),
    ("one_field_wrong", {"a": 1, "b": 2}, {"a": 1, "b": 3}, {}, False),
    ("key_case_and_spaces", {"total_revenue": 5}, {"Total Revenue": 5}, {}, True),
    ("json_string_prediction", {"a": 1}, '{"a": 1.0}', {}, True),
    ("bare_value_single_field", {"a": 3.5}, "3.50", {}, True),
    ("bare_value_two_fields", {"a": 1, "b": 2}, "1", {}, False),
    # numbers: insignificant zeros, thousands, labels, currency, percent
    ("trailing_zeros_str", {"x": "3.50"}, {"x": "3.5"}, {}, True),
    ("trailing_zeros_float", {"x": 3.5}, {"x": "3.500"}, {}, True),
    ("int_vs_float", {"x": 12}, {"x": 12.0}, {}, True),
    ("thousands", {"x": 1234}, {"x": "1,234"}, {}, True),
    ("thousands_decimal", {"x": "1,234.50"}, {"x": 1234.5}, {}, True),
    ("currency", {"x": 19.99}, {"x": "$19.99"}, {}, True),
    ("currency_euro_yen", {"x": "€5"}, {"x": "¥5.00"}, {}, True),
    ("percent_sign", {"x": "12.5%"}, {"x": 12.5}, {}, True),
    ("label_prefix", {"x": 3.5}, {"x": "mean: 3.5"}, {}, True),
    ("whitespace", {"x": 7}, {"x": "  7 \n"}, {}, True),
    ("numpy_scalar", {"x": 7}, {"x": np.int64(7)}, {}, True),
    ("exact_no_tolerance", {"x": 3.5}, {"x": 3.51}, {}, False),
    ("rounding_differs", {"x": 0.3}, {"x": 0.1 + 0.2}, {}, False),
    ("number_vs_text", {"x": 3}, {"x": "three"}, {}, False),
    ("european_decimal_not_number", {"x": 3.5}, {"x": "3,5"}, {}, False),
    ("negative", {"x": -2.5}, {"x": "-2.50"}, {}, True),
    # tolerance
    ("abs_tol_inside", {"x": 3.5}, {"x": 3.6}, {"tolerance": 0.1}, True),
    ("abs_tol_edge_low", {"x": 3.5}, {"x": 3.4}, {"tolerance": 0.1}, True),
    ("abs_tol_outside", {"x": 3.5}, {"x": 3.61}, {"tolerance": 0.1}, False),
    ("abs_tol_fixes_float_noise", {"x": 0.3}, {"x": 0.1 + 0.2}, {"tolerance": 1e-9}, True),
    (
        "rel_tol_note",
        {"x": 200},
        {"x": 203},
        {"tolerance": 0.02, "tolerance_note": "relative"},
        True,
    ),
    (
        "rel_tol_note_outside",
        {"x": 200},
        {"x": 205},
        {"tolerance": 0.02, "tolerance_note": "relative"},
        False,
    ),
    (
        "percent_note_ge1",
        {"x": 200},
        {"x": 203},
        {"tolerance": 2, "tolerance_note": "within 2 percent"},
        True,
    ),
    (
        "percent_note_ge1_out",
        {"x": 200},
        {"x": 205},
        {"tolerance": 2, "tolerance_note": "±2%"},
        False,
    ),
    (
        "absolute_wins",
        {"x": 50},
        {"x": 51.5},
        {"tolerance": 1, "tolerance_note": "absolute, percentage points"},
        False,
    ),
    ("relative_override", {"x": 100}, {"x": 101}, {"tolerance": 0.01, "relative": True}, True),
    # strings
    ("case", {"r": "West"}, {"r": "west"}, {}, True),
    ("punctuation", {"r": "U.S."}, {"r": "US"}, {}, True),
    ("string_label", {"r": "West"}, {"r": "Region: West"}, {}, True),
    ("string_differs", {"r": "West"}, {"r": "East"}, {}, False),
    ("gold_with_colon_kept", {"t": "12:30"}, {"t": "12:30"}, {}, True),
    ("hyphen", {"s": "non-significant"}, {"s": "Non-Significant"}, {}, True),
    # booleans and null
    ("bool_yes", {"b": True}, {"b": "Yes"}, {}, True),
    ("bool_false_str", {"b": False}, {"b": "false"}, {}, True),
    ("bool_wrong", {"b": True}, {"b": "no"}, {}, False),
    ("bool_numpy", {"b": True}, {"b": np.bool_(True)}, {}, True),
    ("null", {"n": None}, {"n": "N/A"}, {}, True),
    ("null_wrong", {"n": None}, {"n": 0}, {}, False),
    # unordered lists: set comparison
    ("set_any_order", {"items": ["a", "b", "c"]}, {"items": ["c", "A", "b"]}, {}, True),
    ("set_missing", {"items": ["a", "b", "c"]}, {"items": ["a", "b"]}, {}, False),
    ("set_extra", {"items": ["a", "b"]}, {"items": ["a", "b", "c"]}, {}, False),
    ("set_duplicates_ignored", {"items": ["a", "b"]}, {"items": ["a", "b", "a"]}, {}, True),
    ("set_from_string", {"items": ["x", "y"]}, {"items": "y, x"}, {}, True),
    ("set_numbers", {"v": [1, 2.5]}, {"v": ["2.50", "1"]}, {}, True),
    ("set_ndarray", {"v": [1, 2]}, {"v": np.array([2, 1])}, {}, True),
    # ordered lists
    (
        "ranking_order",
        {"region_ranking": ["W", "S", "E"]},
        {"region_ranking": ["W", "S", "E"]},
        {},
        True,
    ),
    (
        "ranking_swapped",
        {"region_ranking": ["W", "S", "E"]},
        {"region_ranking": ["S", "W", "E"]},
        {},
        False,
    ),
    ("top_token", {"top_3": ["a", "b", "c"]}, {"top_3": ["b", "a", "c"]}, {}, False),
    ("sorted_token", {"sorted_values": [1, 2]}, {"sorted_values": [2, 1]}, {}, False),
    ("camel_case_top", {"topProducts": ["a", "b"]}, {"topProducts": ["b", "a"]}, {}, False),
    (
        "orders_is_not_order",
        {"orders_by_region": ["a", "b"]},
        {"orders_by_region": ["b", "a"]},
        {},
        True,
    ),
    (
        "note_says_order",
        {"v": ["a", "b"]},
        {"v": ["b", "a"]},
        {"tolerance_note": "order matters"},
        False,
    ),
    (
        "records_with_rank_key_ordered",
        {"r": [{"rank": 1, "name": "a"}, {"rank": 2, "name": "b"}]},
        {"r": [{"rank": 2, "name": "b"}, {"rank": 1, "name": "a"}]},
        {},
        False,
    ),
    (
        "tie_swap_allowed",
        {
            "ranking": [
                {"rank": 1, "region": "E", "rev": 39.5},
                {"rank": 2, "region": "N", "rev": 28.5},
                {"rank": 2, "region": "S", "rev": 28.5},
                {"rank": 4, "region": "W", "rev": 23},
            ]
        },
        {
            "ranking": [
                {"rank": 1, "region": "E", "rev": 39.5},
                {"rank": 3, "region": "S", "rev": 28.5},
                {"rank": 2, "region": "N", "rev": 28.5},
                {"rank": 4, "region": "W", "rev": 23},
            ]
        },
        {},
        True,
    ),
    (
        "non_tie_swap_rejected",
        {"ranking": [{"region": "E", "rev": 39.5}, {"region": "N", "rev": 28.5}]},
        {"ranking": [{"region": "N", "rev": 28.5}, {"region": "E", "rev": 39.5}]},
        {},
        False,
    ),
    (
        "tie_block_wrong_member",
        {"top": [["a", 5], ["b", 5], ["c", 3]]},
        {"top": [["a", 5], ["c", 5], ["b", 3]]},
        {},
        False,
    ),
    (
        "pair_ties_swap",
        {"top": [["a", 5], ["b", 5], ["c", 3]]},
        {"top": [["b", 5], ["a", 5], ["c", 3]]},
        {},
        True,
    ),
    ("scalars_no_scores_strict", {"top": ["a", "b"]}, {"top": ["b", "a"]}, {}, False),
    ("ordered_length", {"top": ["a", "b"]}, {"top": ["a"]}, {}, False),
    (
        "record_extra_keys_ignored",
        {"best": {"name": "Pen", "units": 22}},
        {"best": {"name": "pen", "units": "22", "note": "x"}},
        {},
        True,
    ),
    (
        "nested_missing_key",
        {"best": {"name": "Pen", "units": 22}},
        {"best": {"name": "Pen"}},
        {},
        False,
    ),
]


@pytest.mark.parametrize(
    ("gold", "prediction", "kwargs", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_judge_rule(
    gold: dict[str, Any], prediction: Any, kwargs: dict[str, Any], expected: bool
) -> None:
    judgement = judge_longds(gold, prediction, **kwargs)
    assert isinstance(judgement, Judgement)
    assert judgement.correct is expected, judgement.details
    assert not judgement.excluded


def test_score_is_fraction_of_fields() -> None:
    judgement = judge_longds(
        {"alpha": 1, "beta": 2, "gamma": 3, "delta": 4},
        {"alpha": 1, "beta": 2, "gamma": 0},
        question="Alpha, beta, gamma and delta?",
    )
    assert judgement.score == 0.5 and not judgement.correct
    assert judgement.details["fields"]["delta"] == {"correct": False, "reason": "missing field"}
    assert judgement.details["fields"]["alpha"]["correct"] is True


# (id, gold, prediction, kwargs): the rules cannot tell, so the turn is undecided
UNDECIDED: list[tuple[str, Any, Any, dict[str, Any]]] = [
    ("fields_not_named_and_one_missing", {"a": 1, "b": 2}, {"a": 1}, {}),
    ("prose_against_two_fields", {"n": 12, "total": 164.5}, "There are 12 orders.", {}),
    ("prose_other_number", {"total_revenue": 205}, "Revenue is 0.2 million.", {}),
    ("prose_two_numbers_one_gold", 205, "It grew from 180 to 205.", {}),
    ("prose_label_absent", "South", "The best region is the southern one.", {}),
    ("prose_list_gold", ["a", "b"], "Both a and b.", {}),
    ("object_for_scalar_gold", 3, {"x": 3, "y": 4}, {}),
]


@pytest.mark.parametrize(
    ("gold", "prediction", "kwargs"), [c[1:] for c in UNDECIDED], ids=[c[0] for c in UNDECIDED]
)
def test_undecided(gold: Any, prediction: Any, kwargs: dict[str, Any]) -> None:
    judgement = judge_longds(gold, prediction, **kwargs)
    assert judgement.undecided and judgement.excluded and not judgement.correct, judgement


# (id, gold, prediction, kwargs, expected): non-object gold, prose, requested fields
VALUE_CASES: list[tuple[str, Any, Any, dict[str, Any], bool]] = [
    ("scalar_gold", 205, 205.0, {}, True),
    ("scalar_gold_wrong", 205, 204, {}, False),
    ("scalar_gold_one_field_object", 205, {"revenue": 205}, {}, True),
    ("string_gold", "South", "south", {}, True),
    ("bool_gold", True, "yes", {}, True),
    ("null_gold", None, None, {}, True),
    ("list_gold_any_order", ["a", "b"], ["b", "a"], {}, True),
    ("list_gold_wrong", ["a", "b"], ["a", "c"], {}, False),
    ("nested_list_gold", [["A", 2], ["B", 1]], [["A", 2], ["B", 1]], {}, True),
    ("prose_single_field", {"total_revenue": 205}, "The total revenue is 205.", {}, True),
    ("prose_scalar_gold", 205, "The total revenue is $205.00.", {}, True),
    ("prose_thousands", 1234.5, "Revenue: 1,234.50 in total", {}, True),
    ("prose_with_tolerance", 3.14159, "It is about 3.14.", {"tolerance": 0.01}, True),
    ("prose_label", "South", "The top region is South.", {}, True),
    (
        "requested_subset",
        {"n_orders": 12, "total_revenue": 164.5},
        {"n_orders": 12},
        {"question": "How many orders are there?"},
        True,
    ),
    (
        "requested_subset_wrong",
        {"n_orders": 12, "total_revenue": 164.5},
        {"n_orders": 11},
        {"question": "How many orders are there?"},
        False,
    ),
    ("all_fields_given_unnamed", {"a": 1, "b": 2}, {"a": 1, "b": 2}, {}, True),
    ("all_fields_one_wrong_unnamed", {"a": 1, "b": 2}, {"a": 1, "b": 3}, {}, False),
    ("non_prose_non_object", {"a": 1, "b": 2}, "1", {}, False),
]


@pytest.mark.parametrize(
    ("gold", "prediction", "kwargs", "expected"),
    [c[1:] for c in VALUE_CASES],
    ids=[c[0] for c in VALUE_CASES],
)
def test_value_and_prose_rules(
    gold: Any, prediction: Any, kwargs: dict[str, Any], expected: bool
) -> None:
    judgement = judge_longds(gold, prediction, **kwargs)
    assert judgement.correct is expected and not judgement.undecided, judgement.details


def test_prediction_not_an_object() -> None:
    judgement = judge_longds({"a": 1, "b": 2}, "nonsense")
    assert not judgement.correct and judgement.details["error"] == "prediction is not an object"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3.50", Decimal("3.5")),
        ("$1,234.50", Decimal("1234.5")),
        ("12%", Decimal("12")),
        ("1e3", Decimal("1000")),
        ("Total: -4", Decimal("-4")),
        (True, None),
        ("abc", None),
        (float("nan"), None),
        ("1,23", None),
        (np.float64(2.25), Decimal("2.25")),
    ],
)
def test_parse_number(value: Any, expected: Decimal | None) -> None:
    assert parse_number(value) == expected


@pytest.mark.parametrize(
    ("note", "relative"),
    [
        (None, False),
        ("", False),
        ("relative", True),
        ("within 1 percent", True),
        ("±2%", True),
        ("absolute percentage points", False),
        ("abs 0.1", False),
    ],
)
def test_tolerance_mode(note: str | None, relative: bool) -> None:
    assert tolerance_is_relative(note) is relative
