"""DSEval validators: judge one cell's submission against its reference run.

The validator is the normalized tree of `judges.dseval_spec` (stored by the DSEval
loader in ``BenchTurn.validator``); its top level is an ``and``. Each validator gives
"yes" / "partial" / "no", as DSEval's do:

- ``crash``: the submission must not raise (partial credit: see the end).
- ``namespace_intact``: the submission may add variables, but may update, replace or
  delete only what the reference did, unless the options allow more (True, False or a
  list of names); ``treat_replacement_as_update`` defaults to "replacement not given".
  Needs ``namespace_diff`` on both observations; when either is missing it passes and
  says so.
- ``result``: the cell's last-expression value compared under the compare spec; with no
  reference value any submission passes. A mismatch that passes the loose comparison
  (ignore order / names / dtypes, partial match; matcher options only) is "partial".
- ``namespace_check``: each named variable compared like ``result``.
- ``stream``: captured stdout must be identical.
- ``model``: the submission's model, predicting the reference's inputs, must score each
  metric like the reference's model against the reference's labels: tolerance 0 →
  ``isclose``; t > 0 → ≤ (1 + t)·ref (an error metric); t < 0 → ≥ (1 + t)·ref.
- ``table_test``: the submission's function on every generated case must leave its
  inputs and return its output as the reference's function does (input / output
  checkers are compare specs); an exception on a case is "no".
- ``and``: "no" if any child says no, else "partial" if any says partial, else "yes";
  ``or``: "yes" if any child says yes, else "partial" if any says partial, else "no".

Metrics, generated cases and functions live in kernels, so ``model`` and
``table_test`` read what the kernels computed (``DsevalObservation.extras``, keyed by
`extras_key`: named metrics, plain outputs); compare_fn code runs through a
`CodeRunner` (a kernel probe), and so does any comparison of a value the host holds
only as a stand-in (`stateguard.bench.capture.NOT_PLAIN`: a fitted model, a
``scipy`` object, a user object), which the host never unpickles. A turn is *excluded*
(not judged) when the reference itself failed or lacks what a validator needs, when
code or a stand-in needs a runner that is not given, or for ``vis``, which DSEval
itself does not implement.

``Judgement.correct`` is verdict == "yes"; ``score`` is 1 / 0.5 / 0. As in DSEval, a
crash or a missing result is "partial" when the reference result is written literally
in the submission's code (``DsevalObservation.source``), and a missing result is
"partial" when the value its code printed (or last assigned), evaluated in the kernel
(``extras["inferred_result"]``), matches the reference.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from stateguard.bench.capture import NOT_PLAIN
from stateguard.bench.judges.base import Judgement
from stateguard.bench.judges.dseval_spec import (
    CODE_KEY,
    checked_variables,
    iter_specs,
    normalize_validator,
)
from stateguard.bench.judges.matching import LOOSE_OPTIONS, MatchResult, compare_objects
from stateguard.errors import TaskFormatError

Verdict = Literal["yes", "partial", "no"]
DiffKind = Literal["added", "updated", "replaced", "deleted"]
KERNEL_CHECKS = ("model", "table_test")
INFERRED_KEY = "inferred_result"
"""Extras key of a missing result inferred in the kernel from the submission's code."""
_SCORES: dict[Verdict, float] = {"yes": 1.0, "partial": 0.5, "no": 0.0}

__all__ = [
    "KERNEL_CHECKS",
    "CodeRunner",
    "DsevalObservation",
    "ValueComparison",
    "checked_variables",
    "extras_key",
    "holds_stand_in",
    "judge_dseval",
    "kernel_checks",
    "normalize_validator",
]


class DsevalObservation(BaseModel):
    """What running one cell (reference or submission) produced, as python objects.

    ``namespace`` holds at least the variables named by ``namespace_check``;
    ``namespace_diff`` maps changed global names to how they changed; ``extras`` holds
    what kernels computed for ``model`` / ``table_test`` (see `extras_key`).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    result: Any = None
    namespace: dict[str, Any] = Field(default_factory=dict)
    stream: str | None = None
    error: str | None = None
    namespace_diff: dict[str, DiffKind] | None = None
    extras: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None
    """The code that ran (the submission's), for DSEval's "answer shown in the code" credit."""


class ValueComparison(BaseModel):
    """DSEval's matcher on one pair, run where the values live: strict, and loose when
    the strict comparison failed (None when not computed)."""

    model_config = ConfigDict(frozen=True)

    match: bool
    reason: str = ""
    loose: bool | None = None


class CodeRunner(Protocol):
    """Runs comparisons the host must not run itself (outside this process)."""

    def compare(self, code: str, pairs: Sequence[tuple[Any, Any]]) -> list[MatchResult]:
        """``compare_fn(ref, sub)`` for each pair; a raising call is a non-match."""
        ...

    def compare_values(
        self, options: Mapping[str, Any], pairs: Sequence[tuple[Any, Any]]
    ) -> list[ValueComparison]:
        """DSEval's matcher with ``options`` for each pair, stand-ins revived."""
        ...


def holds_stand_in(value: Any) -> bool:
    """True when ``value`` is, or contains, a stand-in for a value that is not plain data."""
    if isinstance(value, dict):
        return NOT_PLAIN in value or any(holds_stand_in(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(holds_stand_in(v) for v in value)
    return False


def stand_in_type(value: Any) -> str:
    """The type a stand-in stands for (the value's own type name otherwise)."""
    if isinstance(value, dict) and NOT_PLAIN in value:
        return str(value[NOT_PLAIN].get("type", "object"))
    return type(value).__name__


class _Excluded(Exception):
    """The turn cannot be judged (reference incomplete, no runner, vis)."""


def extras_key(alias: str, index: int) -> str:
    """Key of a kernel-computed validator input: alias and position in `iter_specs`."""
    return f"{alias}#{index}"


def kernel_checks(spec: Mapping[str, Any] | None) -> list[tuple[str, str, dict[str, Any]]]:
    """``(key, alias, config)`` of the validators whose inputs kernels must compute."""
    return [
        (extras_key(alias, i), alias, config)
        for i, (alias, config) in enumerate(iter_specs(spec or {}))
        if alias in KERNEL_CHECKS
    ]


def _combine(verdicts: list[Verdict], mode: str = "and") -> Verdict:
    if mode == "or":
        if "yes" in verdicts:
            return "yes"
        return "partial" if "partial" in verdicts else "no"
    if "no" in verdicts:
        return "no"
    return "partial" if "partial" in verdicts else "yes"


class _Judge:
    """One judgement: walks the tree, keeps the leaf checks for reporting."""

    def __init__(
        self, reference: DsevalObservation, submission: DsevalObservation, runner: CodeRunner | None
    ) -> None:
        self.ref = reference
        self.sub = submission
        self.runner = runner
        self.checks: list[dict[str, Any]] = []
        self.index = 0  # position in iter_specs order, for extras keys

    def leaf(self, check: str, verdict: Verdict, reason: str, **extra: Any) -> dict[str, Any]:
        node = {"check": check, "verdict": verdict, "reason": reason, **extra}
        self.checks.append(node)
        return node

    def tree(self, spec: Mapping[str, Any], mode: str = "and") -> dict[str, Any]:
        children = [self.node(alias, config) for alias, config in spec.items()]
        verdict = _combine([c["verdict"] for c in children], mode)
        return {"check": mode, "verdict": verdict, "children": children}

    def node(self, alias: str, config: Any) -> dict[str, Any]:
        if alias in ("and", "or"):
            return self.tree(config, alias)
        key = extras_key(alias, self.index)
        self.index += 1
        if alias == "crash":
            if self.sub.error is None:
                return self.leaf(alias, "yes", "ran without error")
            shown = self.answer_in_source()
            if shown:
                return self.leaf(alias, "partial", shown)
            return self.leaf(alias, "no", f"submission raised: {self.sub.error}")
        if alias == "namespace_intact":
            return self.leaf(alias, *self.intact(config))
        if alias == "result":
            if self.ref.result is None:
                return self.leaf(alias, "yes", "reference has no result")
            if self.sub.result is None:
                return self.leaf(alias, *self.missing_result(config))
            return self.leaf(alias, *self.compare(config, self.ref.result, self.sub.result))
        if alias == "namespace_check":
            children = [self.variable(name, options) for name, options in config.items()]
            verdict = _combine([c["verdict"] for c in children])
            return {"check": alias, "verdict": verdict, "children": children}
        if alias == "stream":
            same = (self.ref.stream or "") == (self.sub.stream or "")
            return self.leaf(alias, "yes" if same else "no", "" if same else "stdout differs")
        if alias == "model":
            return self.leaf(alias, *self.model(config, key))
        if alias == "table_test":
            return self.leaf(alias, *self.table(config, key))
        if alias == "vis":
            raise _Excluded("validator 'vis' is not implemented by DSEval")
        raise TaskFormatError(f"validator: unknown validator {alias!r}")

    # -- comparisons -------------------------------------------------------------

    def missing_result(self, spec: Mapping[str, Any]) -> tuple[Verdict, str]:
        """DSEval's recovery of a result the submission did not return: at most partial."""
        shown = self.answer_in_source()
        if shown:
            return "partial", shown
        inferred = self.sub.extras.get(INFERRED_KEY)
        if not inferred:
            return "no", "output is missing"
        if "value" not in inferred:
            return "no", f"output is missing and cannot be inferred ({inferred.get('error')})"
        verdict, reason = self.compare(spec, self.ref.result, inferred["value"])
        if verdict == "no":
            return "no", reason
        return "partial", f"correct with inferred output ({reason or 'printed'})"

    def answer_in_source(self) -> str:
        """DSEval's partial credit: the reference result written literally in the code."""
        if self.ref.result is None or not self.sub.source or holds_stand_in(self.ref.result):
            return ""
        try:
            text = str(self.ref.result)
        except Exception:  # a value whose __str__ raises
            return ""
        if text and re.search(r"\b" + re.escape(text) + r"\b", self.sub.source):
            return f"output is directly shown in the code: {text[:200]}"
        return ""

    def compare(self, spec: Mapping[str, Any], ref: Any, sub: Any) -> tuple[Verdict, str]:
        if CODE_KEY in spec:
            if self.runner is None:
                raise _Excluded("compare_fn code needs a kernel to run in")
            match = self.runner.compare(spec[CODE_KEY], [(ref, sub)])[0]
            return ("yes" if match.match else "no"), match.reason
        if holds_stand_in(ref) or holds_stand_in(sub):
            if self.runner is None:
                kinds = f"{stand_in_type(ref)} and {stand_in_type(sub)}"
                raise _Excluded(f"comparing {kinds} needs a kernel to run in")
            got = self.runner.compare_values(spec, [(ref, sub)])[0]
            if got.match:
                return "yes", got.reason
            if got.loose:
                return "partial", f"matches with looser constraints ({got.reason})"
            return "no", got.reason
        strict = compare_objects(ref, sub, **spec)
        if strict.match:
            return "yes", strict.reason
        loose = compare_objects(ref, sub, **{**spec, **LOOSE_OPTIONS})
        if loose.match:
            return "partial", f"matches with looser constraints ({loose.reason or strict.reason})"
        return "no", strict.reason

    def variable(self, name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        if name not in self.ref.namespace:
            raise _Excluded(f"variable {name} not found in reference")
        if name not in self.sub.namespace:
            return self.leaf("namespace_check", "no", f"variable {name} not found", variable=name)
        verdict, reason = self.compare(spec, self.ref.namespace[name], self.sub.namespace[name])
        return self.leaf("namespace_check", verdict, reason, variable=name)

    def intact(self, options: Mapping[str, Any]) -> tuple[Verdict, str]:
        if self.ref.namespace_diff is None or self.sub.namespace_diff is None:
            return "yes", "namespace diff not observed"
        replacement = options.get("replacement")
        as_update = options.get("treat_replacement_as_update")
        if as_update is None:
            as_update = replacement is None

        def fold(diff: Mapping[str, str]) -> dict[str, str]:
            return {n: ("updated" if as_update and k == "replaced" else k) for n, k in diff.items()}

        ref_diff, sub_diff = fold(self.ref.namespace_diff), fold(self.sub.namespace_diff)
        allowed: dict[str, Any] = {
            "added": options.get("addition", True),
            "updated": options.get("update"),
            "replaced": replacement,
            "deleted": options.get("deletion"),
        }
        for kind in ("updated", "replaced", "deleted"):
            if allowed[kind] is None:
                allowed[kind] = [n for n, k in ref_diff.items() if k == kind]
        for name, kind in sub_diff.items():
            rule = allowed[kind]
            if rule is False or (isinstance(rule, list) and name not in rule):
                return "no", f"unexpected variable {kind}: {name}"
        return "yes", "namespace is intact"

    def model(self, config: Mapping[str, Any], key: str) -> tuple[Verdict, str]:
        ref = self.ref.extras.get(key)
        if not ref or "error" in ref:
            detail = (ref or {}).get("error", "not evaluated")
            raise _Excluded(f"model {config['model_name']}: reference not evaluable: {detail}")
        sub = self.sub.extras.get(key)
        if not sub:
            return "no", f"model {config['model_name']} was not evaluated in the submission"
        if "error" in sub:
            return "no", f"model {config['model_name']}: {sub['error']}"
        for metric, tol in zip(config["metric_type"], config["tolerance"], strict=True):
            r, s = float(ref["metrics"][metric]), float(sub["metrics"][metric])
            if tol == 0:
                ok = math.isclose(s, r, rel_tol=1e-5, abs_tol=1e-8) or (
                    math.isnan(r) and math.isnan(s)
                )
            elif tol > 0:
                ok = s <= (1 + tol) * r
            else:
                ok = s >= (1 + tol) * r
            if not ok:
                suffix = "" if tol == 0 else f" (tolerance {tol})"
                return "no", f"metric {metric}: {s} vs reference {r}{suffix}"
        return "yes", "model satisfies the criterion"

    def table(self, config: Mapping[str, Any], key: str) -> tuple[Verdict, str]:
        name = config["function_name"]
        ref = self.ref.extras.get(key)
        if not ref or "error" in ref:
            detail = (ref or {}).get("error", "not evaluated")
            raise _Excluded(f"table_test {name}: reference not evaluable: {detail}")
        sub = self.sub.extras.get(key)
        if not sub:
            return "no", f"function {name} was not evaluated in the submission"
        if "error" in sub:
            return "no", str(sub["error"])
        for i, case in enumerate(ref["cases"]):
            checks = []
            if config["input_checker"] is not None:
                checks.append(
                    (
                        "input",
                        config["input_checker"],
                        ref["inputs_after"][i],
                        sub["inputs_after"][i],
                    )
                )
            checks.append(
                ("output", config["output_checker"], ref["outputs"][i], sub["outputs"][i])
            )
            for what, spec, r, s in checks:
                verdict, reason = self.compare(spec, r, s)
                if verdict != "yes":
                    return verdict, f"{what} of {name} on test case #{i} ({case!r:.80}): {reason}"
        return "yes", f"all {len(ref['cases'])} test cases pass"


def judge_dseval(
    validator: Mapping[str, Any] | None,
    reference: DsevalObservation,
    submission: DsevalObservation,
    runner: CodeRunner | None = None,
) -> Judgement:
    """Judge a submission cell against the reference cell under a normalized validator.

    ``validator=None`` means DSEval's default (``comparison`` template); ``runner`` runs
    compare_fn code. See the module docstring for when a turn is excluded.
    """
    spec = normalize_validator(None) if validator is None else validator
    if reference.error is not None:
        return _excluded(f"reference failed: {reference.error}")
    judge = _Judge(reference, submission, runner)
    try:
        tree = judge.tree(spec)
    except _Excluded as exc:
        return _excluded(str(exc))
    verdict: Verdict = tree["verdict"]
    return Judgement(
        correct=verdict == "yes",
        score=_SCORES[verdict],
        details={"verdict": verdict, "checks": judge.checks, "tree": tree},
    )


def _excluded(reason: str) -> Judgement:
    return Judgement(correct=False, score=0.0, excluded=True, details={"reason": reason})
