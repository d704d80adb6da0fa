"""Kernel-side parts of DSEval's ``model``, ``table_test`` and compare_fn validators.

These functions run *inside* a kernel, in a fork probe (the namespace they see is a
throw-away copy), because what they execute is benchmark-supplied: generated test
cases, input validators, compare_fn code, user models and functions. What they write
for the host is plain data (`stateguard.bench.capture` conventions: a value that is
not plain data crosses as a stand-in holding its own pickle as opaque bytes); what
the host passes on from one kernel to another (a reference's inputs and labels, its
test cases, values to compare) it passes as those bytes, unread, and only a kernel
unpickles them (`capture.revive`).

- `model_metrics`: predictions of a model in the namespace and the metrics of those
  predictions (plain numbers, named); on the reference side it also saves the inputs
  and labels as opaque bytes, on the submission side it reads the reference's.
- `table_reference` / `table_submission`: generate DSEval's test cases (case ``i`` is
  generated after seeding ``random`` and ``numpy.random`` with ``i``; ``"//"`` repeats
  the previous case's generator with the new seed; a top-level list is a tuple of
  arguments, strings in backticks are expressions, strings in triple backticks are
  code defining ``_test_case`` or ``_generate()``), check them with ``_validate``, then
  call the function on deep copies and record the inputs after the call and the output.
- `compare_code`: ``compare_fn(ref, sub)`` over pairs of values.

DSEval's matcher over values the host holds only as stand-ins runs in
`stateguard.bench.kernel_match` (it needs pandas in the kernel).

Standard library, numpy and pandas (imported lazily); scikit-learn is used for metrics
when the kernel has it, else the same definitions in numpy (binary labels: positive
class 1, as scikit-learn's defaults).
"""

from __future__ import annotations

import copy
import pickle
import random
import traceback
import types
from typing import Any

from stateguard.bench.capture import _dump, _user_ns, one_thread, portable, revive


def _default_ns() -> dict[str, Any]:
    """What DSEval's own ``exec_code`` offers benchmark code: pd, np, random (and json)."""
    import json

    import numpy
    import pandas

    return {"pd": pandas, "np": numpy, "random": random, "json": json, "__name__": "__dseval__"}


def _load(path: str) -> Any:
    with open(path, "rb") as fh:
        return pickle.load(fh)


def _short_tb() -> str:
    return traceback.format_exc(limit=-3).strip()[-1500:]


# -- metrics -----------------------------------------------------------------------


def _metric(name: str, y_true: Any, y_pred: Any) -> float:
    import numpy as np

    try:
        from sklearn import metrics as skm
    except ImportError:
        skm = None
    if skm is not None:
        if name == "rmse":
            return float(np.sqrt(skm.mean_squared_error(y_true, y_pred)))
        fn = {
            "accuracy": skm.accuracy_score,
            "precision": skm.precision_score,
            "recall": skm.recall_score,
            "f1": skm.f1_score,
            "roc_auc": skm.roc_auc_score,
            "r2": skm.r2_score,
            "mse": skm.mean_squared_error,
        }[name]
        return float(fn(y_true, y_pred))
    t, p = np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()
    if t.shape != p.shape:
        raise ValueError(f"labels have shape {t.shape}, predictions {p.shape}")
    if name == "accuracy":
        return float(np.mean(t == p))
    if name in ("mse", "rmse", "r2"):
        t, p = t.astype(float), p.astype(float)
        mse = float(np.mean((t - p) ** 2))
        if name == "mse":
            return mse
        if name == "rmse":
            return float(np.sqrt(mse))
        total = float(np.sum((t - t.mean()) ** 2))
        return 1.0 - float(np.sum((t - p) ** 2)) / total if total else 0.0
    if name == "roc_auc":
        from pandas import Series

        ranks = Series(p.astype(float)).rank().to_numpy()
        pos = t == 1
        n_pos, n_neg = int(pos.sum()), int((~pos).sum())
        if not n_pos or not n_neg:
            raise ValueError("roc_auc needs both classes in the labels")
        return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    tp = float(np.sum((p == 1) & (t == 1)))
    precision = tp / float(np.sum(p == 1)) if np.sum(p == 1) else 0.0
    recall = tp / float(np.sum(t == 1)) if np.sum(t == 1) else 0.0
    if name == "precision":
        return precision
    if name == "recall":
        return recall
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def model_metrics(
    path: str,
    model_name: str,
    inputs_name: str,
    labels_name: str,
    metrics: list[str],
    reference_path: str | None = None,
) -> None:
    """Score ``model_name`` on the inputs/labels (own, or the reference's) and pickle it."""
    ns = _user_ns()
    try:
        if reference_path is None:
            inputs, labels = ns[inputs_name], ns[labels_name]
        else:
            inputs, labels = _load(reference_path)  # the reference kernel's own pickle
        if model_name not in ns:
            _dump(path, {"error": f"model {model_name} not found"})
            return
        with one_thread():
            predictions = ns[model_name].predict(inputs)
            scores = {m: _metric(m, labels, predictions) for m in metrics}
    except Exception as exc:
        _dump(path, {"error": f"{type(exc).__name__}: {exc}", "traceback": _short_tb()})
        return
    payload: dict[str, Any] = {"metrics": scores}
    if reference_path is None:
        try:
            payload["inputs_labels"] = pickle.dumps((inputs, labels))
        except Exception as exc:
            payload = {"error": f"inputs or labels cannot be pickled: {type(exc).__name__}: {exc}"}
    _dump(path, payload)


# -- table tests -------------------------------------------------------------------


def _case_value(parameter: Any, top: bool = False) -> Any:
    if isinstance(parameter, tuple) or (top and isinstance(parameter, list)):
        return tuple(_case_value(item) for item in parameter)
    if isinstance(parameter, str):
        text = parameter.strip()
        if text.startswith("```\n") and text.endswith("```"):
            ns = _default_ns()
            exec(compile(text[4:-3], "<dseval-test-generate>", "exec"), ns)
            if "_test_case" in ns:
                parameter = ns["_test_case"]
            elif isinstance(ns.get("_generate"), types.FunctionType):
                parameter = ns["_generate"]()
            else:
                raise ValueError("test case code defines neither _test_case nor _generate()")
        if isinstance(parameter, str) and parameter.startswith("`") and parameter.endswith("`"):
            parameter = eval(
                compile(parameter[1:-1], "<dseval-test-expression>", "eval"), _default_ns()
            )
    return parameter


def generate_cases(test_cases: list[Any], input_validator: str | None) -> list[Any]:
    """DSEval's test cases from their configuration (see the module docstring)."""
    import numpy as np

    validate = None
    if input_validator is not None:
        ns = _default_ns()
        exec(compile(input_validator, "<dseval-input-validator>", "exec"), ns)
        validate = ns["_validate"]
    cases: list[Any] = []
    last = None
    for case_id, raw in enumerate(test_cases):
        random.seed(case_id)
        np.random.seed(case_id)
        if raw == "//":
            if last is None:
                raise ValueError("no test case to repeat")
            raw = last
        else:
            last = raw
        case = _case_value(raw, top=True)
        if not isinstance(case, tuple | dict):
            raise ValueError(f"test case #{case_id} is neither a tuple nor a dict: {case!r:.200}")
        if validate is not None:
            try:
                ok = validate(**case) if isinstance(case, dict) else validate(*case)
            except AssertionError:
                ok = False
            if ok is False:
                raise ValueError(f"test case #{case_id} is rejected by _validate: {case!r:.200}")
        cases.append(case)
    return cases


def _call_all(function: Any, cases: list[Any]) -> tuple[list[Any], list[Any]]:
    inputs_after, outputs = [], []
    for case in cases:
        args = copy.deepcopy(case)
        with one_thread():
            out = function(**args) if isinstance(args, dict) else function(*args)
        inputs_after.append(portable(args))
        outputs.append(portable(out))
    return inputs_after, outputs


def table_reference(
    path: str, function_name: str, test_cases: list[Any], input_validator: str | None
) -> None:
    """Generate the cases and record the reference function's behaviour on them."""
    ns = _user_ns()
    try:
        if function_name not in ns:
            _dump(path, {"error": f"function {function_name} not found in the reference"})
            return
        cases = generate_cases(test_cases, input_validator)
        cases_pickle = pickle.dumps(cases)
        inputs_after, outputs = _call_all(ns[function_name], cases)
    except Exception as exc:
        _dump(path, {"error": f"{type(exc).__name__}: {exc}", "traceback": _short_tb()})
        return
    _dump(
        path,
        {
            "cases": [portable(c) for c in cases],
            "cases_pickle": cases_pickle,
            "inputs_after": inputs_after,
            "outputs": outputs,
        },
    )


def table_submission(path: str, function_name: str, cases_path: str) -> None:
    """Run the submission's function on the reference's cases."""
    ns = _user_ns()
    if function_name not in ns:
        _dump(path, {"error": f"function {function_name} not found in the submission"})
        return
    cases = _load(cases_path)  # the reference kernel's own pickle of the cases
    inputs_after, outputs = [], []
    for i, case in enumerate(cases):
        try:
            got_in, got_out = _call_all(ns[function_name], [case])
        except Exception as exc:
            _dump(
                path,
                {
                    "error": f"function {function_name} raised on test case #{i}: "
                    f"{type(exc).__name__}: {exc}"
                },
            )
            return
        inputs_after += got_in
        outputs += got_out
    _dump(path, {"inputs_after": inputs_after, "outputs": outputs})


# -- compare_fn code ---------------------------------------------------------------


def compare_code(in_path: str, out_path: str) -> None:
    """``compare_fn(ref, sub)`` of the code in ``in_path`` over its pairs."""
    job = _load(in_path)
    results: list[dict[str, Any]] = []
    try:
        ns = _default_ns()
        exec(compile(job["code"], "<dseval-compare-fn>", "exec"), ns)
        compare_fn = ns["compare_fn"]
    except Exception as exc:
        message = f"compare_fn code failed: {type(exc).__name__}: {exc}"
        _dump(out_path, {"results": [{"match": False, "reason": message}] * len(job["pairs"])})
        return
    for ref, sub in job["pairs"]:
        try:
            with one_thread():
                ref, sub = revive(ref), revive(sub)
                got = compare_fn(ref, sub)
            results.append({"match": bool(got["match"]), "reason": str(got.get("reason", ""))})
        except AssertionError as exc:
            results.append({"match": False, "reason": f"comparison raises AssertionError: {exc}"})
        except Exception as exc:
            results.append(
                {"match": False, "reason": f"comparison failure: {type(exc).__name__}: {exc}"}
            )
    _dump(out_path, {"results": results})


# -- a missing result, inferred from the code ---------------------------------------


def _printed_expressions(node: Any) -> list[Any]:
    """Expressions inside a ``print`` argument (f-string parts included, literals not)."""
    import ast

    if isinstance(node, ast.expr) and not isinstance(
        node, ast.Constant | ast.FormattedValue | ast.JoinedStr
    ):
        return [node]
    found: list[Any] = []
    for child in ast.iter_child_nodes(node):
        found += _printed_expressions(child)
    return found


def infer_output(path: str, source: str, kind: str, keys: list[Any] | None = None) -> None:
    """DSEval's guess of a cell's output when it returned none, from the namespace.

    The values of the expressions the cell's top-level ``print`` calls show; else the
    target of its last assignment (the object, for ``x.attr = ...`` / ``x[k] = ...``).
    Several values are packed like the reference (``kind`` "tuple", "list", or "dict"
    with the reference's ``keys``: the last values, or None-padded in front), else the
    last one is taken.
    """
    import ast

    ns = _user_ns()
    try:
        tree = ast.parse(source)
        nodes: list[Any] = []
        for stmt in tree.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            is_call = isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            if is_call and call.func.id == "print":
                for arg in call.args:
                    nodes += _printed_expressions(arg)
        if not nodes:
            for stmt in reversed(tree.body):
                target = None
                if isinstance(stmt, ast.Assign):
                    target = stmt.targets[0]
                elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
                    target = stmt.target
                if target is not None:
                    if isinstance(target, ast.Attribute | ast.Subscript):
                        target = target.value
                    nodes = [target]
                    break
        # Re-parsed from source, as DSEval does: an assignment target has a Store context.
        values = [eval(compile(ast.unparse(n), "<dseval-print>", "eval"), ns) for n in nodes]
    except Exception as exc:
        _dump(path, {"error": f"output cannot be inferred: {type(exc).__name__}: {exc}"})
        return
    if not values:
        _dump(path, {"error": "output is missing"})
        return
    if len(values) == 1:
        value: Any = values[0]
    elif kind == "tuple":
        value = tuple(values)
    elif kind == "list":
        value = list(values)
    elif kind == "dict" and keys:
        padded = [None] * (len(keys) - len(values)) + values[-len(keys) :]
        value = dict(zip(keys, padded, strict=True))
    else:
        value = values[-1]
    _dump(path, {"value": portable(value)})
