"""DSEval validator configurations: the YAML of a cell -> a normalized, checked tree.

DSEval builds a cell's validator as ``and`` over the keys of its (template-merged)
configuration, each key naming a validator: ``crash``, ``namespace_intact``, ``result``,
``namespace_check``, ``stream``, ``model``, ``table_test``, ``vis`` and the combinators
``and`` / ``or`` (whose configuration is again such a mapping). `normalize_validator`
reproduces that, and checks every option up front, so a malformed cell is rejected
at load time with the key that is wrong instead of failing mid-run.

Normalized form (JSON-like, stored in ``BenchTurn.validator``): an ordered mapping
``{alias: config}`` read as ``and``; per alias:

- ``crash``, ``stream``, ``vis``: ``{}``;
- ``namespace_intact``: its options (``addition``, ``update``, ``replacement``,
  ``deletion``: bool or list of names; ``treat_replacement_as_update``: bool);
- ``result``: a *compare spec*; ``namespace_check``: ``{variable: compare spec}``;
- ``model``: ``model_name``, ``inputs_name``, ``labels_name``, ``metric_type`` (list) and
  ``tolerance`` (list of the same length);
- ``table_test``: ``function_name``, ``test_cases`` (as written), ``input_validator``
  (code or None), ``input_checker`` (compare spec, or None when disabled with
  ``false``), ``output_checker`` (compare spec);
- ``and`` / ``or``: a nested normalized mapping.

A compare spec is either matcher options (see `judges.matching`) or ``{"code": src}``,
benchmark-supplied source defining ``compare_fn(ref, sub)`` that returns
``{"match": bool, "reason": str}``; such code is only ever run in a kernel probe.

Templates: ``comparison`` (default: crash, namespace_intact, result), ``intact`` (crash,
namespace_intact), ``basic`` (crash), ``empty``. The template's keys come first, in
that order, then the cell's other keys in the order written (DSEval's deep merge).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stateguard.bench.judges.matching import MATCH_OPTIONS
from stateguard.errors import TaskFormatError

TEMPLATES: dict[str, tuple[str, ...]] = {
    "empty": (),
    "basic": ("crash",),
    "intact": ("crash", "namespace_intact"),
    "comparison": ("crash", "namespace_intact", "result"),
}
VALIDATORS = (
    "crash",
    "namespace_intact",
    "result",
    "namespace_check",
    "stream",
    "model",
    "table_test",
    "vis",
    "and",
    "or",
)
CODE_KEY = "code"
METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc", "r2", "mse", "rmse")
_INTACT_OPTIONS = frozenset(
    {"addition", "update", "replacement", "deletion", "treat_replacement_as_update"}
)
_MODEL_KEYS = ("model_name", "inputs_name", "labels_name", "metric_type", "tolerance")
_TABLE_KEYS = ("function_name", "test_cases", "input_validator", "input_checker", "output_checker")


def compare_spec(value: Any, where: str) -> dict[str, Any]:
    """A compare spec from None, matcher options, ``{compare_fn: ...}`` or code."""
    if value is None:
        return {}
    if isinstance(value, str):
        if "compare_fn" not in value:
            raise TaskFormatError(f"{where}: code must define compare_fn(ref, sub)")
        return {CODE_KEY: value}
    if not isinstance(value, Mapping):
        raise TaskFormatError(
            f"{where}: expected matcher options or compare_fn code, got {type(value).__name__}"
        )
    if "compare_fn" in value:
        extra = sorted(set(value) - {"compare_fn"})
        if extra:
            raise TaskFormatError(f"{where}: keys {extra} given beside compare_fn")
        return compare_spec(value["compare_fn"], f"{where}.compare_fn")
    if set(value) == {CODE_KEY} and isinstance(value[CODE_KEY], str):
        return dict(value)  # already normalized
    unknown = sorted(set(value) - MATCH_OPTIONS)
    if unknown:
        raise TaskFormatError(
            f"{where}: unknown comparison options {unknown} (known: {sorted(MATCH_OPTIONS)})"
        )
    for key, option in value.items():
        if key in ("rtol", "atol", "metrictol"):
            if option is not None and (
                isinstance(option, bool) or not isinstance(option, int | float)
            ):
                raise TaskFormatError(f"{where}.{key}: must be a number, got {option!r}")
        elif not isinstance(option, bool):
            raise TaskFormatError(f"{where}.{key}: must be true or false, got {option!r}")
    return dict(value)


def _names_or_bool(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, list) and all(isinstance(n, str) for n in value):
        return list(value)
    raise TaskFormatError(f"{where}: must be true, false or a list of names, got {value!r}")


def _intact(value: Any, where: str) -> dict[str, Any]:
    options = _mapping(value, where)
    unknown = sorted(set(options) - _INTACT_OPTIONS)
    if unknown:
        raise TaskFormatError(f"{where}: unknown options {unknown}")
    out = {
        k: _names_or_bool(v, f"{where}.{k}")
        for k, v in options.items()
        if k != "treat_replacement_as_update"
    }
    if "treat_replacement_as_update" in options:
        flag = options["treat_replacement_as_update"]
        if flag is not None and not isinstance(flag, bool):
            raise TaskFormatError(f"{where}.treat_replacement_as_update: must be true or false")
        if flag and options.get("replacement") is not None:
            raise TaskFormatError(
                f"{where}: replacement cannot be given when treat_replacement_as_update is true"
            )
        out["treat_replacement_as_update"] = flag
    return out


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TaskFormatError(f"{where}: expected a mapping, got {type(value).__name__}")
    return dict(value)


def _positional(value: Any, keys: tuple[str, ...], where: str) -> dict[str, Any]:
    """DSEval passes a list config positionally and a mapping by keyword."""
    if isinstance(value, list):
        if len(value) > len(keys):
            raise TaskFormatError(f"{where}: at most {len(keys)} positional values")
        return dict(zip(keys, value, strict=False))
    config = _mapping(value, where)
    unknown = sorted(set(config) - set(keys))
    if unknown:
        raise TaskFormatError(f"{where}: unknown keys {unknown} (known: {list(keys)})")
    return config


def _model(value: Any, where: str) -> dict[str, Any]:
    config = _positional(value, _MODEL_KEYS, where)
    out: dict[str, Any] = {}
    for key in _MODEL_KEYS[:3]:
        if not isinstance(config.get(key), str) or not config[key]:
            raise TaskFormatError(f"{where}.{key}: required, a variable name")
        out[key] = config[key]
    metrics = config.get("metric_type")
    metrics = [metrics] if isinstance(metrics, str) else metrics
    if not isinstance(metrics, list) or not metrics:
        raise TaskFormatError(f"{where}.metric_type: required, one of {list(METRICS)} or a list")
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise TaskFormatError(
            f"{where}.metric_type: unknown metric(s) {bad}; known {list(METRICS)}"
        )
    tolerance = config.get("tolerance", 0.0)
    tolerances = tolerance if isinstance(tolerance, list) else [tolerance] * len(metrics)
    if len(tolerances) != len(metrics) or any(
        isinstance(t, bool) or not isinstance(t, int | float) for t in tolerances
    ):
        raise TaskFormatError(
            f"{where}.tolerance: a number or a list of {len(metrics)} numbers, got {tolerance!r}"
        )
    out["metric_type"] = list(metrics)
    out["tolerance"] = [float(t) for t in tolerances]
    return out


def _table_test(value: Any, where: str) -> dict[str, Any]:
    config = _positional(value, _TABLE_KEYS, where)
    name = config.get("function_name")
    if not isinstance(name, str) or not name:
        raise TaskFormatError(f"{where}.function_name: required, a function name")
    cases = config.get("test_cases")
    if not isinstance(cases, list) or not cases:
        raise TaskFormatError(f"{where}.test_cases: required, a non-empty list")
    if cases[0] == "//":
        raise TaskFormatError(f"{where}.test_cases[0]: '//' repeats a previous case; none exists")
    validator = config.get("input_validator")
    if validator is not None and (not isinstance(validator, str) or "_validate" not in validator):
        raise TaskFormatError(f"{where}.input_validator: code defining _validate(...) expected")
    checker = config.get("input_checker")
    if checker is False:
        input_checker = None
    else:
        input_checker = compare_spec(None if checker is True else checker, f"{where}.input_checker")
    return {
        "function_name": name,
        "test_cases": list(cases),
        "input_validator": validator,
        "input_checker": input_checker,
        "output_checker": compare_spec(config.get("output_checker"), f"{where}.output_checker"),
    }


def _no_options(value: Any, where: str) -> dict[str, Any]:
    if value not in (None, {}, []):
        raise TaskFormatError(f"{where}: takes no options, got {value!r}")
    return {}


def _normalize_one(alias: str, value: Any, where: str) -> Any:
    if alias in ("crash", "stream", "vis"):
        return _no_options(value, where)
    if alias == "namespace_intact":
        return _intact(value, where)
    if alias == "result":
        return compare_spec(value, where)
    if alias == "namespace_check":
        if value is None:  # DSEval builds a checker of no variables: it always passes
            return {}
        if isinstance(value, list) and all(isinstance(n, str) for n in value):
            value = dict.fromkeys(value)
        if not isinstance(value, Mapping):
            raise TaskFormatError(f"{where}: expected a mapping of variable names")
        return {str(n): compare_spec(o, f"{where}.{n}") for n, o in value.items()}
    if alias == "model":
        return _model(value, where)
    if alias == "table_test":
        return _table_test(value, where)
    return _normalize_tree(_mapping(value, where), where)  # and / or


def _normalize_tree(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for alias, value in config.items():
        if alias not in VALIDATORS:
            raise TaskFormatError(
                f"{where}: unknown validator {alias!r} (DSEval knows {list(VALIDATORS)})"
            )
        out[alias] = _normalize_one(alias, value, f"{where}.{alias}")
    if not out and where != "validator":
        raise TaskFormatError(f"{where}: needs at least one validator")
    return out


def normalize_validator(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Apply DSEval's template and check every validator and option (see the module doc).

    Raises `TaskFormatError` naming the offending key, e.g. ``validator.model.metric_type``.
    """
    if raw is not None and not isinstance(raw, Mapping):
        raise TaskFormatError(f"validator: expected a mapping, got {type(raw).__name__}")
    config = dict(raw or {})
    template = config.pop("template", "comparison")
    if template not in TEMPLATES:
        raise TaskFormatError(
            f"validator.template: unknown template {template!r} (known: {list(TEMPLATES)})"
        )
    merged: dict[str, Any] = dict.fromkeys(TEMPLATES[template])
    merged.update(config)
    return _normalize_tree(merged, "validator")


def iter_specs(spec: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Every ``(alias, config)`` of a normalized tree, nested ``and``/``or`` included."""
    found: list[tuple[str, Any]] = []
    for alias, config in spec.items():
        if alias in ("and", "or"):
            found += iter_specs(config)
        else:
            found.append((alias, config))
    return found


def checked_variables(spec: Mapping[str, Any] | None) -> list[str]:
    """Variables whose values the judge reads from the namespace (``namespace_check``)."""
    names: list[str] = []
    for alias, config in iter_specs(spec or {}):
        if alias == "namespace_check":
            names += list(config)
    return list(dict.fromkeys(names))
