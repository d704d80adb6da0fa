"""DSEval matcher options and validator checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from stateguard.bench.judges import (
    DsevalObservation,
    compare_objects,
    judge_dseval,
    normalize_validator,
)
from stateguard.errors import TaskFormatError

DF = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
SERIES = pd.Series([3.0, 1.0, 2.0], index=["p", "q", "r"], name="v")

# (id, ref, sub, options, expected match)
MATCH_CASES: list[tuple[str, Any, Any, dict[str, Any], bool]] = [
    # scalars
    ("int_equal", 5, 5, {}, True),
    ("int_float", 5, 5.0, {}, True),
    ("float_rel_1e-5_default", 1000.0, 1000.0099, {}, True),
    ("float_rel_outside", 1000.0, 1000.02, {}, False),
    ("float_atol_1e-8_default", 0.0, 5e-9, {}, True),
    ("float_atol_outside", 0.0, 5e-8, {}, False),
    ("metrictol_higher_ok", 0.80, 0.95, {"metrictol": 0.9}, True),
    ("metrictol_within", 0.80, 0.73, {"metrictol": 0.9}, True),
    ("metrictol_too_low", 0.80, 0.71, {"metrictol": 0.9}, False),
    ("numpy_scalar", np.float64(2.5), 2.5, {}, True),
    ("nan_nan", float("nan"), np.nan, {}, True),
    ("bool_vs_int", True, 1, {}, False),
    ("bool_equal", np.bool_(True), True, {}, True),
    ("str_equal", "Chicken Bowl", "Chicken Bowl", {}, True),
    ("str_differs", "Chicken Bowl", "chicken bowl", {}, False),
    ("number_vs_str", 4622, "4622", {}, False),
    ("custom_rtol", 100.0, 101.0, {"rtol": 0.02}, True),
    ("dtype_objects", np.dtype("int64"), np.dtype("int64"), {}, True),
    # containers
    ("list_equal", [1, 2, 3], [1, 2, 3], {}, True),
    ("list_vs_tuple", (1, 2), [1, 2], {}, True),
    ("list_order", [1, 2, 3], [3, 2, 1], {}, False),
    ("list_ignore_order", [1, 2, 3], [3, 2, 1], {"ignore_order": True}, True),
    ("list_mixed_types_ignore_order", [1, "a"], ["a", 1], {"ignore_order": True}, True),
    ("list_length", [1, 2], [1, 2, 3], {}, False),
    ("dict_equal", {"a": 1, "b": 2.0}, {"b": 2, "a": 1}, {}, True),
    ("dict_keys_differ", {"a": 1}, {"b": 1}, {}, False),
    ("dict_ignore_index", {"a": 1, "b": 2}, {"x": 1, "y": 2}, {"ignore_index": True}, True),
    ("set_equal", {1, 2}, {2, 1}, {}, True),
    # numpy arrays
    ("array_equal", np.array([1.0, np.nan]), np.array([1.0, np.nan]), {}, True),
    ("array_close", np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), {}, True),
    ("array_shape", np.array([1, 2]), np.array([[1, 2]]), {}, False),
    ("array_strict_type", np.array([1, 2]), np.array([1.0, 2.0]), {"strict_type": True}, False),
    ("array_vs_list", np.array([1, 2]), [1, 2], {}, False),
    ("array_vs_list_value_only", np.array([1, 2]), [1, 2], {"value_only": True}, True),
    # pandas
    ("frame_equal", DF, DF.copy(), {}, True),
    ("frame_value_changed", DF, DF.assign(a=[1, 2, 4]), {}, False),
    ("frame_row_order", DF, DF.iloc[::-1], {}, False),
    ("frame_ignore_order", DF, DF.iloc[::-1], {"ignore_order": True}, True),
    ("frame_index_differs", DF, DF.set_axis([5, 6, 7]), {}, False),
    ("frame_ignore_index", DF, DF.set_axis([5, 6, 7]), {"ignore_index": True}, True),
    ("frame_column_order", DF, DF[["b", "a"]], {}, False),
    ("frame_column_order_ignore_names", DF, DF[["b", "a"]], {"ignore_names": True}, True),
    ("frame_renamed_columns", DF, DF.rename(columns={"a": "A"}), {"ignore_names": True}, True),
    ("frame_dtype", DF, DF.astype({"a": "float64"}), {}, False),
    ("frame_ignore_dtypes", DF, DF.astype({"a": "float64"}), {"ignore_dtypes": True}, True),
    (
        "frame_float_within_tolerance",
        DF.astype({"a": float}),
        DF.assign(a=[1.0, 2.0, 3.0 + 1e-9]),
        {},
        True,
    ),
    (
        "frame_float_outside_tolerance",
        DF.astype({"a": float}),
        DF.assign(a=[1.0, 2.0, 3.001]),
        {},
        False,
    ),
    ("series_equal", SERIES, SERIES.copy(), {}, True),
    ("series_name", SERIES, SERIES.rename("w"), {}, False),
    ("series_ignore_names", SERIES, SERIES.rename("w"), {"ignore_names": True}, True),
    ("series_sorted", SERIES, SERIES.sort_values(), {}, False),
    ("series_ignore_order", SERIES, SERIES.sort_values(), {"ignore_order": True}, True),
    ("series_vs_frame", SERIES, SERIES.to_frame(), {}, False),
    ("index_vs_list", pd.Index(["a", "b"]), ["a", "b"], {}, False),
    ("index_value_only", pd.Index(["a", "b"]), ["a", "b"], {"value_only": True}, True),
    ("single_cell_value_only", pd.Series([523], index=["Texas"]), 523, {"value_only": True}, True),
    ("frame_value_only_nested", DF, [[1, "x"], [2, "y"], [3, "z"]], {"value_only": True}, True),
    (
        "value_only_ignore_order",
        pd.Index([7, 11, 10]),
        [10, 11, 7],
        {"value_only": True, "ignore_order": True},
        True,
    ),
    ("timestamp", pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-01"), {}, True),
    # partial matches
    (
        "partial_column_of_frame",
        SERIES.reset_index(drop=True),
        pd.DataFrame({"k": [0, 0, 0], "v": [3.0, 1.0, 2.0]}),
        {"match_partial": True, "ignore_names": True},
        True,
    ),
    ("partial_extra_columns", DF, DF.assign(c=0), {"match_partial": True}, True),
    ("partial_series_to_frame", SERIES.to_frame(), SERIES, {"match_partial": True}, True),
    ("partial_off", DF, DF.assign(c=0), {}, False),
    ("type_only", DF, DF.assign(a=0), {"type_only": True}, True),
]


@pytest.mark.parametrize(
    ("ref", "sub", "options", "expected"),
    [c[1:] for c in MATCH_CASES],
    ids=[c[0] for c in MATCH_CASES],
)
def test_compare_objects(ref: Any, sub: Any, options: dict[str, Any], expected: bool) -> None:
    result = compare_objects(ref, sub, **options)
    assert result.match is expected, result.reason
    if not expected:
        assert result.reason


def test_compare_does_not_mutate_inputs() -> None:
    sub = DF[["b", "a"]].rename(columns={"b": "B"})
    before = sub.copy()
    compare_objects(DF, sub, ignore_names=True, ignore_order=True)
    pd.testing.assert_frame_equal(sub, before)


def test_unknown_option_rejected() -> None:
    with pytest.raises(ValueError, match="fuzzy"):
        compare_objects(1, 1, fuzzy=True)


# ---- validators --------------------------------------------------------------------------


def obs(**kwargs: Any) -> DsevalObservation:
    return DsevalObservation(**kwargs)


def test_normalize_default_and_templates() -> None:
    assert normalize_validator(None) == {"crash": {}, "namespace_intact": {}, "result": {}}
    assert normalize_validator({"template": "intact", "namespace_check": {"x": None}}) == {
        "crash": {},
        "namespace_intact": {},
        "namespace_check": {"x": {}},
    }
    assert normalize_validator({"result": {"compare_fn": {"value_only": True}}})["result"] == {
        "value_only": True
    }
    assert normalize_validator({"result": {"ignore_index": True}})["result"] == {
        "ignore_index": True
    }
    assert normalize_validator({"namespace_check": ["a", "b"]})["namespace_check"] == {
        "a": {},
        "b": {},
    }
    assert normalize_validator({"template": "empty", "stream": None}) == {"stream": {}}
    with pytest.raises(TaskFormatError, match="unknown validator 'fuzzy'"):
        normalize_validator({"fuzzy": {}})


# (id, validator, reference, submission, expected verdict)
VALIDATOR_CASES: list[
    tuple[str, dict[str, Any] | None, DsevalObservation, DsevalObservation, str]
] = [
    ("result_right", None, obs(result=4622), obs(result=4622), "yes"),
    ("result_wrong", None, obs(result=4622), obs(result=4621), "no"),
    ("result_missing", None, obs(result=4622), obs(result=None), "no"),
    ("reference_without_result", None, obs(result=None), obs(result=5), "yes"),
    ("crash", None, obs(result=None), obs(result=None, error="KeyError: 0"), "no"),
    ("loose_is_partial", None, obs(result=DF), obs(result=DF.iloc[::-1]), "partial"),
    (
        "option_makes_yes",
        {"result": {"ignore_order": True}},
        obs(result=DF),
        obs(result=DF.iloc[::-1]),
        "yes",
    ),
    (
        "value_only_columns",
        normalize_validator({"result": {"compare_fn": {"value_only": True}}}),
        obs(result=DF.columns),
        obs(result=["a", "b"]),
        "yes",
    ),
    (
        "namespace_check_right",
        normalize_validator({"namespace_check": {"df": None}}),
        obs(namespace={"df": DF}),
        obs(namespace={"df": DF.copy()}),
        "yes",
    ),
    (
        "namespace_check_wrong",
        normalize_validator({"namespace_check": {"df": None}}),
        obs(namespace={"df": DF}),
        obs(namespace={"df": DF.assign(a=0)}),
        "no",
    ),
    (
        "namespace_check_missing",
        normalize_validator({"namespace_check": {"df": None}}),
        obs(namespace={"df": DF}),
        obs(namespace={}),
        "no",
    ),
    (
        "namespace_check_ignore_index",
        normalize_validator({"namespace_check": {"df": {"ignore_index": True}}}),
        obs(namespace={"df": DF}),
        obs(namespace={"df": DF.set_axis([9, 8, 7])}),
        "yes",
    ),
    (
        "intact_template_ignores_result",
        normalize_validator({"template": "intact"}),
        obs(result=SERIES),
        obs(result=None),
        "yes",
    ),
    (
        "stream_same",
        normalize_validator({"stream": None}),
        obs(stream="a\nb\n"),
        obs(stream="a\nb\n"),
        "yes",
    ),
    (
        "stream_differs",
        normalize_validator({"stream": None}),
        obs(stream="a\nb\n"),
        obs(stream="a\n\nb\n"),
        "no",
    ),
    (
        "intact_unexpected_update",
        None,
        obs(namespace_diff={"chipo": "updated"}),
        obs(namespace_diff={"chipo": "updated", "users": "updated"}),
        "no",
    ),
    (
        "intact_same_updates",
        None,
        obs(namespace_diff={"chipo": "updated"}),
        obs(namespace_diff={"chipo": "replaced", "tmp": "added"}),
        "yes",
    ),
    (
        "intact_deletion_not_allowed",
        None,
        obs(namespace_diff={}),
        obs(namespace_diff={"x": "deleted"}),
        "no",
    ),
    (
        "intact_addition_forbidden",
        normalize_validator({"namespace_intact": {"addition": False}}),
        obs(namespace_diff={}),
        obs(namespace_diff={"x": "added"}),
        "no",
    ),
    ("intact_not_observed", None, obs(), obs(namespace_diff={"x": "deleted"}), "yes"),
]


@pytest.mark.parametrize(
    ("validator", "reference", "submission", "verdict"),
    [c[1:] for c in VALIDATOR_CASES],
    ids=[c[0] for c in VALIDATOR_CASES],
)
def test_validator(validator, reference, submission, verdict: str) -> None:
    judgement = judge_dseval(validator, reference, submission)
    assert judgement.details["verdict"] == verdict, judgement.details
    assert judgement.correct is (verdict == "yes")
    assert judgement.score == {"yes": 1.0, "partial": 0.5, "no": 0.0}[verdict]
    assert not judgement.excluded


def test_reference_failure_excludes() -> None:
    judgement = judge_dseval(None, obs(error="ValueError: Invalid frequency: BM"), obs(result=1))
    assert judgement.excluded and not judgement.correct


def test_reference_missing_variable_excludes() -> None:
    validator = normalize_validator({"namespace_check": {"df": None}})
    judgement = judge_dseval(validator, obs(namespace={}), obs(namespace={"df": DF}))
    assert judgement.excluded and "df" in judgement.details["reason"]


def _run_cell(code: str, namespace: dict[str, Any]) -> Any:
    """Exec a cell and return its last expression's value (None if it ends in a statement)."""
    import ast

    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)


def _perturb(value: Any) -> Any:
    if isinstance(value, pd.DataFrame | pd.Series):
        return value.iloc[:-1]
    if isinstance(value, pd.Index):
        return value[:-1]
    return None


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # the session's own pandas-2 idioms
def test_real_session_reference_against_itself_and_perturbed(dseval_root) -> None:
    """Run a real session in-process: each cell's reference passes, a truncated copy fails."""
    from stateguard.bench.loaders import load_dseval_session

    task = load_dseval_session(dseval_root / "02-filtering-sorting-fictional-army.py")
    namespace: dict[str, Any] = {}
    judged = 0
    for turn in task.turns:
        if "setup_code" in turn.meta:
            _run_cell(turn.meta["setup_code"], namespace)
        result = _run_cell(turn.reference_code, namespace)
        names = turn.validator.get("namespace_check", {})
        snapshot = {n: namespace[n].copy() for n in names}
        reference = obs(result=result, namespace=snapshot)
        copy = obs(
            result=result.copy() if hasattr(result, "copy") else result,
            namespace={n: v.copy() for n, v in snapshot.items()},
        )
        assert judge_dseval(turn.validator, reference, copy).correct, turn.question
        perturbed = _perturb(result)
        if perturbed is not None and not turn.validator["result"].get("value_only"):
            judgement = judge_dseval(turn.validator, reference, obs(result=perturbed))
            assert not judgement.correct, turn.question
            judged += 1
    assert judged >= 10


# ---- tree validators and kernel-computed inputs (no kernel: extras given by hand) ---------

MODEL = normalize_validator(
    {"template": "empty", "model": ["m", "X", "y", ["accuracy", "mse"], [-0.1, 0.2]]}
)
MODEL_EXACT = normalize_validator({"template": "empty", "model": ["m", "X", "y", "r2"]})


def _model_obs(**metrics: float) -> DsevalObservation:
    return obs(extras={"model#0": {"metrics": metrics}})


@pytest.mark.parametrize(
    ("spec", "ref", "sub", "verdict"),
    [
        (MODEL, {"accuracy": 0.8, "mse": 1.0}, {"accuracy": 0.8, "mse": 1.0}, "yes"),
        (MODEL, {"accuracy": 0.8, "mse": 1.0}, {"accuracy": 0.73, "mse": 1.0}, "yes"),
        (MODEL, {"accuracy": 0.8, "mse": 1.0}, {"accuracy": 0.71, "mse": 1.0}, "no"),
        (MODEL, {"accuracy": 0.8, "mse": 1.0}, {"accuracy": 0.99, "mse": 1.19}, "yes"),
        (MODEL, {"accuracy": 0.8, "mse": 1.0}, {"accuracy": 0.8, "mse": 1.21}, "no"),
        (MODEL_EXACT, {"r2": 0.5}, {"r2": 0.5 + 1e-9}, "yes"),
        (MODEL_EXACT, {"r2": 0.5}, {"r2": 0.51}, "no"),
    ],
    ids=[
        "same",
        "neg_tol_within",
        "neg_tol_below",
        "pos_tol_within",
        "pos_tol_above",
        "zero_tol_isclose",
        "zero_tol_differs",
    ],
)
def test_model_tolerances(spec, ref, sub, verdict: str) -> None:
    judgement = judge_dseval(spec, _model_obs(**ref), _model_obs(**sub))
    assert judgement.details["verdict"] == verdict, judgement.details


def test_model_missing_or_failing_in_submission_and_reference() -> None:
    ref = _model_obs(accuracy=0.8, mse=1.0)
    assert judge_dseval(MODEL, ref, obs()).details["verdict"] == "no"
    failing = obs(extras={"model#0": {"error": "model m not found"}})
    assert "not found" in judge_dseval(MODEL, ref, failing).details["checks"][0]["reason"]
    assert judge_dseval(MODEL, failing, ref).excluded  # the reference must be evaluable


TABLE = normalize_validator(
    {"template": "empty", "table_test": {"function_name": "f", "test_cases": [[1], [2]]}}
)
NO_INPUT_CHECK = normalize_validator(
    {
        "template": "empty",
        "table_test": {"function_name": "f", "test_cases": [[1]], "input_checker": False},
    }
)


def _table(outputs, inputs_after=None, cases=None) -> DsevalObservation:
    data = {"outputs": outputs, "inputs_after": inputs_after or [(1,), (2,)]}
    if cases is not None:
        data["cases"] = cases
    return obs(extras={"table_test#0": data})


def test_table_test_verdicts() -> None:
    ref = _table([2, 4], cases=[(1,), (2,)])
    assert judge_dseval(TABLE, ref, _table([2, 4])).correct
    assert judge_dseval(TABLE, ref, _table([2, 5])).details["verdict"] == "no"
    changed = _table([2, 4], inputs_after=[(1,), (3,)])
    assert "input of f" in judge_dseval(TABLE, ref, changed).details["checks"][0]["reason"]
    ref1 = _table([2], inputs_after=[(1,)], cases=[(1,)])
    assert judge_dseval(NO_INPUT_CHECK, ref1, _table([2], inputs_after=[(9,)])).correct
    raised = obs(extras={"table_test#0": {"error": "function f raised on test case #0"}})
    assert judge_dseval(TABLE, ref, raised).details["verdict"] == "no"
    assert judge_dseval(TABLE, obs(extras={"table_test#0": {"error": "x"}}), ref).excluded


def test_and_or_combination() -> None:
    spec = normalize_validator(
        {"template": "empty", "or": {"result": None, "stream": None}, "and": {"crash": None}}
    )
    ref = obs(result=5, stream="5\n")
    assert judge_dseval(spec, ref, obs(result=6, stream="5\n")).correct  # or: stream says yes
    assert not judge_dseval(spec, ref, obs(result=6, stream="6\n")).correct
    assert (
        judge_dseval(spec, ref, obs(result=5, stream="x", error="E: e")).details["verdict"] == "no"
    )  # and: crash says no
    partial = judge_dseval(spec, obs(result=DF, stream="a"), obs(result=DF.iloc[::-1], stream="b"))
    assert partial.details["verdict"] == "partial"
    tree = judge_dseval(spec, ref, obs(result=5, stream="5\n")).details["tree"]
    assert [c["check"] for c in tree["children"]] == ["or", "and"]


class _FakeRunner:
    def __init__(self, match: bool) -> None:
        self.match = match
        self.seen: list = []

    def compare(self, code, pairs):
        from stateguard.bench.judges.matching import MatchResult

        self.seen.append((code, list(pairs)))
        return [MatchResult(match=self.match, reason="") for _ in pairs]


def test_compare_fn_code_runs_through_the_runner_only() -> None:
    code = "def compare_fn(ref, sub):\n    return {'match': True, 'reason': ''}\n"
    spec = normalize_validator({"result": {"compare_fn": code}, "namespace_check": {"v": code}})
    ref, sub = obs(result=1, namespace={"v": 2}), obs(result=9, namespace={"v": 3})
    assert judge_dseval(spec, ref, sub).excluded  # no runner: not judged, never in-process
    yes, no = _FakeRunner(True), _FakeRunner(False)
    assert judge_dseval(spec, ref, sub, yes).correct
    assert yes.seen == [(code, [(1, 9)]), (code, [(2, 3)])]
    assert judge_dseval(spec, ref, sub, no).details["verdict"] == "no"  # code has no loose pass


def test_vis_is_excluded_and_intact_options() -> None:
    assert judge_dseval(normalize_validator({"vis": None}), obs(), obs()).excluded
    allow = normalize_validator({"namespace_intact": {"deletion": ["tmp"], "update": True}})
    sub = obs(namespace_diff={"tmp": "deleted", "df": "updated"})
    assert judge_dseval(allow, obs(namespace_diff={}), sub).correct
    strict = normalize_validator(
        {"namespace_intact": {"replacement": ["a"], "treat_replacement_as_update": False}}
    )
    assert judge_dseval(
        strict, obs(namespace_diff={}), obs(namespace_diff={"a": "replaced"})
    ).correct
    assert not judge_dseval(
        strict, obs(namespace_diff={}), obs(namespace_diff={"b": "replaced"})
    ).correct


def test_answer_written_in_the_code_is_partial_credit() -> None:
    ref = obs(result=4622)
    crashed = obs(error="NameError: x", source="print(4622)\nx")
    assert judge_dseval(None, ref, crashed).details["verdict"] == "partial"
    missing = obs(result=None, source="# there are 4622 rows\nn = len(df)")
    judgement = judge_dseval(None, ref, missing)
    assert judgement.details["verdict"] == "partial" and judgement.score == 0.5
    assert not judgement.correct
    assert judge_dseval(None, ref, obs(result=None, source="46220")).details["verdict"] == "no"
    assert judge_dseval(None, ref, obs(error="E: e", source="x")).details["verdict"] == "no"


def test_empty_namespace_check_passes_as_in_dseval() -> None:
    spec = normalize_validator({"template": "empty", "namespace_check": None})
    assert spec == {"namespace_check": {}}
    assert judge_dseval(spec, obs(), obs()).correct


def test_inferred_output_is_at_most_partial() -> None:
    ref = obs(result=3.5)
    printed = obs(result=None, extras={"inferred_result": {"value": 3.5}})
    assert judge_dseval(None, ref, printed).details["verdict"] == "partial"
    wrong = obs(result=None, extras={"inferred_result": {"value": 4.0}})
    assert judge_dseval(None, ref, wrong).details["verdict"] == "no"
    failed = obs(result=None, extras={"inferred_result": {"error": "NameError"}})
    assert "cannot be inferred" in judge_dseval(None, ref, failed).details["checks"][-1]["reason"]


def test_pandas_extension_arrays_compare_as_numpy_arrays() -> None:
    import pandas as pd

    from stateguard.bench.judges.matching import compare_objects

    strings = pd.Series(["p1", "p2"], dtype="string").array
    assert compare_objects(strings, pd.Series(["p1", "p2"], dtype="string").array).match
    assert not compare_objects(strings, pd.Series(["p1", "p3"], dtype="string").array).match
    assert compare_objects(strings[:0], strings[:0]).match  # empty: no ambiguous truth value
    ints = pd.array([1, None], dtype="Int64")
    assert compare_objects(ints, pd.array([1, None], dtype="Int64")).match
