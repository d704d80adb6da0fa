"""DSEval validators: judge one cell's submission against its reference run.

A cell's validator (as normalized by `normalize_validator`, which the DSEval loader
stores in ``BenchTurn.validator``) is a conjunction of checks, each with a verdict
"yes" / "partial" / "no":

- ``crash``: the submission must not raise.
- ``namespace_intact``: the submission may add variables, but may update, replace or
  delete only what the reference did (options ``addition`` / ``update`` / ``replacement``
  / ``deletion``: True, False or a list of names; ``treat_replacement_as_update``).
  Needs ``namespace_diff`` on both observations; when either is missing the check
  passes and says so.
- ``result``: the cell's last-expression value is compared with `compare_objects` and
  the options given; with no reference value any submission passes. A mismatch that
  passes the loose comparison (ignore order / names / dtypes, partial match) is
  "partial".
- ``namespace_check``: each named variable is compared like ``result``.
- ``stream``: captured stdout must be identical.

Templates (``template:`` in the YAML): ``comparison`` (default: crash, namespace_intact,
result), ``intact`` (crash, namespace_intact), ``basic`` (crash), ``empty``; explicit
keys are merged over the template. The overall verdict is "no" if any check says no,
else "partial" if any says partial, else "yes"; ``Judgement.correct`` is verdict == "yes"
and ``score`` is 1 / 0.5 / 0. DSEval's recovery of answers from printed output or
source code is not done here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stateguard.bench.judges.base import Judgement
from stateguard.bench.judges.matching import LOOSE_OPTIONS, MATCH_OPTIONS, compare_objects
from stateguard.errors import TaskFormatError

Verdict = Literal["yes", "partial", "no"]
DiffKind = Literal["added", "updated", "replaced", "deleted"]

TEMPLATES: dict[str, dict[str, Any]] = {
    "empty": {},
    "basic": {"crash": {}},
    "intact": {"crash": {}, "namespace_intact": {}},
    "comparison": {"crash": {}, "namespace_intact": {}, "result": {}},
}
CHECKS = ("crash", "namespace_intact", "result", "namespace_check", "stream")
_INTACT_OPTIONS = frozenset(
    {"addition", "update", "replacement", "deletion", "treat_replacement_as_update"}
)
_SCORES: dict[Verdict, float] = {"yes": 1.0, "partial": 0.5, "no": 0.0}


class DsevalObservation(BaseModel):
    """What running one cell (reference or submission) produced, as python objects.

    ``namespace`` must hold at least the variables named by ``namespace_check``;
    ``namespace_diff`` maps changed global names to how they changed.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    result: Any = None
    namespace: dict[str, Any] = Field(default_factory=dict)
    stream: str | None = None
    error: str | None = None
    namespace_diff: dict[str, DiffKind] | None = None


def _match_options(value: Any, where: str) -> dict[str, Any]:
    """Flatten ``{compare_fn: {...}}`` / ``{...}`` / None into matcher options."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TaskFormatError(f"{where}: expected a mapping of options, got {value!r}")
    if "compare_fn" in value:
        value = value["compare_fn"]
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise TaskFormatError(f"{where}: compare_fn code is not supported, only options")
    unknown = set(value) - MATCH_OPTIONS
    if unknown:
        raise TaskFormatError(f"{where}: unknown comparison options {sorted(unknown)}")
    return dict(value)


def normalize_validator(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Apply DSEval's template and flatten options into ``{check: options}``.

    ``namespace_check`` becomes ``{variable: options}``. Raises `TaskFormatError`
    naming the offending key.
    """
    raw = dict(raw or {})
    template = raw.pop("template", "comparison")
    if template not in TEMPLATES:
        raise TaskFormatError(f"validator: unknown template {template!r}")
    merged = copy.deepcopy(TEMPLATES[template])
    for key, value in raw.items():
        if key not in CHECKS:
            raise TaskFormatError(f"validator: unsupported check {key!r}")
        merged[key] = value
    normalized: dict[str, Any] = {}
    for key in [k for k in CHECKS if k in merged]:
        value = merged[key]
        if key == "result":
            normalized[key] = _match_options(value, "validator.result")
        elif key == "namespace_check":
            names = {n: None for n in value} if isinstance(value, list) else value
            if not isinstance(names, Mapping) or not names:
                raise TaskFormatError("validator.namespace_check: expected variable names")
            normalized[key] = {
                str(n): _match_options(o, f"validator.namespace_check.{n}")
                for n, o in names.items()
            }
        elif key == "namespace_intact":
            options = dict(value or {})
            unknown = sorted(set(options) - _INTACT_OPTIONS)
            if unknown:
                raise TaskFormatError(f"validator.namespace_intact: unknown options {unknown}")
            normalized[key] = options
        else:
            if value not in (None, {}):
                raise TaskFormatError(f"validator.{key}: takes no options, got {value!r}")
            normalized[key] = {}
    return normalized


def _compare(ref: Any, sub: Any, options: Mapping[str, Any]) -> tuple[Verdict, str]:
    strict = compare_objects(ref, sub, **options)
    if strict.match:
        return "yes", strict.reason
    loose = compare_objects(ref, sub, **{**options, **LOOSE_OPTIONS})
    if loose.match:
        return "partial", f"matches with looser constraints ({loose.reason or strict.reason})"
    return "no", strict.reason


def _check_intact(
    options: Mapping[str, Any], ref: DsevalObservation, sub: DsevalObservation
) -> tuple[Verdict, str]:
    if ref.namespace_diff is None or sub.namespace_diff is None:
        return "yes", "namespace diff not observed"
    replacement = options.get("replacement")
    as_update = options.get("treat_replacement_as_update", replacement is None)

    def fold(diff: Mapping[str, str]) -> dict[str, str]:
        return {n: ("updated" if as_update and k == "replaced" else k) for n, k in diff.items()}

    ref_diff, sub_diff = fold(ref.namespace_diff), fold(sub.namespace_diff)
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


def _combine(verdicts: list[Verdict]) -> Verdict:
    if "no" in verdicts:
        return "no"
    return "partial" if "partial" in verdicts else "yes"


def judge_dseval(
    validator: Mapping[str, Any] | None,
    reference: DsevalObservation,
    submission: DsevalObservation,
) -> Judgement:
    """Judge a submission cell against the reference cell under a normalized validator.

    ``validator=None`` means DSEval's default (``comparison`` template). The turn is
    excluded when the reference itself failed or lacks a checked variable.
    """
    spec = normalize_validator(None) if validator is None else validator
    if reference.error is not None:
        return Judgement(
            correct=False,
            score=0.0,
            excluded=True,
            details={"reason": f"reference failed: {reference.error}"},
        )
    checks: list[dict[str, Any]] = []

    def record(check: str, verdict: Verdict, reason: str, **extra: Any) -> None:
        checks.append({"check": check, "verdict": verdict, "reason": reason, **extra})

    for check, options in spec.items():
        if check == "crash":
            if submission.error is None:
                record(check, "yes", "ran without error")
            else:
                record(check, "no", f"submission raised: {submission.error}")
        elif check == "namespace_intact":
            record(check, *_check_intact(options, reference, submission))
        elif check == "result":
            if reference.result is None:
                record(check, "yes", "reference has no result")
            elif submission.result is None:
                record(check, "no", "output is missing")
            else:
                record(check, *_compare(reference.result, submission.result, options))
        elif check == "namespace_check":
            for name, var_options in options.items():
                if name not in reference.namespace:
                    return Judgement(
                        correct=False,
                        score=0.0,
                        excluded=True,
                        details={"reason": f"variable {name} not found in reference"},
                    )
                if name not in submission.namespace:
                    record(check, "no", f"variable {name} not found in submission", variable=name)
                    continue
                verdict, reason = _compare(
                    reference.namespace[name], submission.namespace[name], var_options
                )
                record(check, verdict, reason, variable=name)
        elif check == "stream":
            same = (reference.stream or "") == (submission.stream or "")
            record(check, "yes" if same else "no", "" if same else "stdout differs")
        else:
            raise TaskFormatError(f"validator: unsupported check {check!r}")
    verdict = _combine([c["verdict"] for c in checks])
    return Judgement(
        correct=verdict == "yes",
        score=_SCORES[verdict],
        details={"verdict": verdict, "checks": checks},
    )
