"""Scoring staleness case files: the shared dev set, our held-out style extra set,
`load_cases` validation and the `stateguard lineage check` command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.errors import CaseFormatError
from stateguard.lineage.cases import CaseResult, CheckSummary, check_cases, load_cases

REPO_ROOT = Path(__file__).resolve().parents[2]
DEV_CASES = REPO_ROOT.parent / "shared" / "lineage-cases" / "dev.json"
GRANULARITY_CASES = REPO_ROOT.parent / "shared" / "lineage-cases" / "granularity.json"
EXTRA_CASES = Path(__file__).resolve().parent / "cases" / "extra.json"
PARTS_CASES = Path(__file__).resolve().parent / "cases" / "parts.json"
PANDAS_CASES = REPO_ROOT.parent / "shared" / "lineage-cases" / "pandas.json"
IDIOM_CASES = Path(__file__).resolve().parent / "cases" / "pandas_idioms.json"
RULE_CASES = Path(__file__).resolve().parent / "cases" / "python_rules.json"


def _ids(path: Path) -> list[str]:
    return [c.id for c in load_cases(path)] if path.is_file() else []


def _explain(result: CaseResult) -> str:
    lines = [f"case {result.id} failed:"]
    for c in result.checks:
        if not c.passed:
            lines.append(f"  after cell {c.after}: expected stale={c.expected}, got {c.observed}")
            lines.extend(f"    {why}" for why in c.stale_reads)
    lines.extend(f"  {e}" for e in result.cell_errors)
    return "\n".join(lines)


@pytest.fixture(scope="module")
def dev_summary() -> CheckSummary:
    """check_cases over the shared dev set (run once for the module)."""
    if not DEV_CASES.is_file():
        pytest.skip(f"shared lineage cases not found at {DEV_CASES}")
    return check_cases(load_cases(DEV_CASES), jobs=2)


@pytest.fixture(scope="module")
def granularity_summary() -> CheckSummary:
    """check_cases over the shared part-granularity set (run once for the module)."""
    if not GRANULARITY_CASES.is_file():
        pytest.skip(f"shared lineage cases not found at {GRANULARITY_CASES}")
    return check_cases(load_cases(GRANULARITY_CASES), jobs=2)


@pytest.fixture(scope="module")
def parts_summary() -> CheckSummary:
    """check_cases over tests/lineage/cases/parts.json (run once for the module)."""
    return check_cases(load_cases(PARTS_CASES), jobs=2)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(GRANULARITY_CASES) or ["<granularity set absent>"])
def test_granularity_case(granularity_summary: CheckSummary, case_id: str) -> None:
    result = _result(granularity_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(PARTS_CASES))
def test_parts_case(parts_summary: CheckSummary, case_id: str) -> None:
    result = _result(parts_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


@pytest.fixture(scope="module")
def pandas_summary() -> CheckSummary:
    """check_cases over the shared everyday-pandas set (run once for the module)."""
    if not PANDAS_CASES.is_file():
        pytest.skip(f"shared lineage cases not found at {PANDAS_CASES}")
    return check_cases(load_cases(PANDAS_CASES), jobs=2)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(PANDAS_CASES) or ["<pandas set absent>"])
def test_pandas_case(pandas_summary: CheckSummary, case_id: str) -> None:
    result = _result(pandas_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


@pytest.fixture(scope="module")
def idiom_summary() -> CheckSummary:
    """check_cases over tests/lineage/cases/pandas_idioms.json (run once for the module)."""
    return check_cases(load_cases(IDIOM_CASES), jobs=2)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(IDIOM_CASES))
def test_pandas_idiom_case(idiom_summary: CheckSummary, case_id: str) -> None:
    """Everyday pandas idioms, one rule each: what the operation reads, with a near miss
    (a column it does read changes) and the conservative fallbacks."""
    result = _result(idiom_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


def test_pandas_idioms_have_both_labels() -> None:
    cases = load_cases(IDIOM_CASES)
    labels = [c.expect_stale for case in cases for c in case.checks]
    assert len(cases) >= 30 and labels.count(True) >= 20 and labels.count(False) >= 20


@pytest.fixture(scope="module")
def rule_summary() -> CheckSummary:
    """check_cases over tests/lineage/cases/python_rules.json (run once for the module)."""
    return check_cases(load_cases(RULE_CASES), jobs=2)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(RULE_CASES))
def test_python_rule_case(rule_summary: CheckSummary, case_id: str) -> None:
    """Plain-Python dataflow rules, one table row each (cells in, stale or not out), with
    the near misses of each rule."""
    result = _result(rule_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


def test_python_rules_have_both_labels() -> None:
    cases = load_cases(RULE_CASES)
    labels = [c.expect_stale for case in cases for c in case.checks]
    assert len(cases) >= 40 and labels.count(True) >= 15 and labels.count(False) >= 15


@pytest.mark.kernel
def test_results_do_not_depend_on_kernel_reuse_or_order(
    granularity_summary: CheckSummary,
) -> None:
    """The same cases on one reused kernel, in reverse order, give the same outcomes."""
    cases = load_cases(GRANULARITY_CASES)
    again = check_cases(list(reversed(cases)), jobs=1)
    first = {r.id: [c.observed for c in r.checks] for r in granularity_summary.cases}
    second = {r.id: [c.observed for c in r.checks] for r in again.cases}
    assert first == second


@pytest.fixture(scope="module")
def extra_summary() -> CheckSummary:
    """check_cases over tests/lineage/cases/extra.json (run once for the module)."""
    return check_cases(load_cases(EXTRA_CASES), jobs=2)


def _result(summary: CheckSummary, case_id: str) -> CaseResult:
    return next(r for r in summary.cases if r.id == case_id)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(DEV_CASES) or ["<dev set absent>"])
def test_dev_case(dev_summary: CheckSummary, case_id: str) -> None:
    result = _result(dev_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


@pytest.mark.kernel
def test_dev_summary_counts(dev_summary: CheckSummary) -> None:
    total = sum(len(c.checks) for c in load_cases(DEV_CASES))
    assert dev_summary.checks_total == total
    assert [r.id for r in dev_summary.cases] == _ids(DEV_CASES)


@pytest.mark.kernel
@pytest.mark.parametrize("case_id", _ids(EXTRA_CASES))
def test_extra_case(extra_summary: CheckSummary, case_id: str) -> None:
    result = _result(extra_summary, case_id)
    if not result.passed:
        pytest.fail(_explain(result), pytrace=False)


def test_extra_set_is_balanced_and_explained() -> None:
    """The extra set is a demanding held-out style set: many cases, both labels, reasons."""
    raw = json.loads(EXTRA_CASES.read_text(encoding="utf-8"))
    cases = load_cases(EXTRA_CASES)
    assert len(cases) >= 60
    labels = [c.expect_stale for case in cases for c in case.checks]
    stale, fresh = labels.count(True), labels.count(False)
    assert min(stale, fresh) / max(stale, fresh) > 0.8
    assert all(isinstance(item.get("why"), str) and item["why"] for item in raw)
    dev_ids = set(_ids(DEV_CASES))
    assert not dev_ids & {c.id for c in cases}


# ---------------------------------------------------------------------------
# load_cases validation


def _write(tmp_path: Path, payload: Any) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


GOOD: dict[str, Any] = {
    "id": "good",
    "label": "ok",
    "cells": ["a = 1", "print(a)"],
    "checks": [{"after": 1, "expect_stale": False}],
}


def test_load_cases_valid_with_extra_fields(tmp_path: Path) -> None:
    cases = load_cases(_write(tmp_path, [{**GOOD, "why": "a is fresh"}]))
    assert len(cases) == 1
    assert cases[0].id == "good" and cases[0].cells == ("a = 1", "print(a)")
    assert cases[0].checks[0].after == 1 and cases[0].checks[0].expect_stale is False


@pytest.mark.parametrize(
    ("payload", "needles"),
    [
        pytest.param("[{", ["not valid JSON"], id="malformed-json"),
        pytest.param({"id": "x"}, ["expected a JSON list"], id="not-a-list"),
        pytest.param(
            [GOOD, {k: v for k, v in GOOD.items() if k != "cells"} | {"id": "nocells"}],
            ["'nocells'", "index 1", "cells"],
            id="missing-cells",
        ),
        pytest.param(
            [{k: v for k, v in GOOD.items() if k != "checks"}],
            ["'good'", "checks"],
            id="missing-checks",
        ),
        pytest.param(
            [{**GOOD, "checks": [{"after": 2, "expect_stale": True}]}],
            ["'good'", "after=2", "2 cells"],
            id="check-index-out-of-range",
        ),
        pytest.param(
            [{**GOOD, "checks": [{"after": -1, "expect_stale": True}]}],
            ["'good'", "after"],
            id="negative-check-index",
        ),
        pytest.param(
            [{**GOOD, "checks": [{"after": 0}]}],
            ["'good'", "expect_stale"],
            id="missing-expect-stale",
        ),
        pytest.param(
            [{**GOOD, "checks": [{"after": 0, "expect_stale": False, "x": 1}]}],
            ["'good'", "x"],
            id="unknown-check-field",
        ),
        pytest.param([GOOD, GOOD], ["'good'", "duplicated", "index 1"], id="duplicate-id"),
    ],
)
def test_load_cases_errors_name_case_and_field(
    tmp_path: Path, payload: Any, needles: list[str]
) -> None:
    path = _write(tmp_path, payload)
    with pytest.raises(CaseFormatError) as info:
        load_cases(path)
    message = str(info.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message, (needle, message)


def test_load_cases_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaseFormatError, match="no such file"):
        load_cases(tmp_path / "absent.json")


# ---------------------------------------------------------------------------
# the CLI

PASSING = [
    {
        "id": "cli/stale",
        "cells": ["a = 1", "b = a + 1", "a = 2", "print(b)"],
        "checks": [{"after": 1, "expect_stale": False}, {"after": 3, "expect_stale": True}],
    },
]
FAILING = [
    *PASSING,
    {
        "id": "cli/wrong-label",
        "cells": ["a = 1", "print(a)"],
        "checks": [{"after": 1, "expect_stale": True}],
    },
]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["lineage", "check", *args, "--jobs", "1"])


@pytest.mark.kernel
def test_cli_json_all_pass(tmp_path: Path) -> None:
    res = _invoke(str(_write(tmp_path, PASSING)), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out) == {"cases", "checks_passed", "checks_total"}
    assert out["checks_passed"] == out["checks_total"] == 2
    (case,) = out["cases"]
    assert case["id"] == "cli/stale"
    assert [(c["after"], c["expected"], c["observed"]) for c in case["checks"]] == [
        (1, False, False),
        (3, True, True),
    ]
    assert any("b@v1" in why for why in case["checks"][1]["stale_reads"])


@pytest.mark.kernel
def test_cli_failing_check_exit_codes(tmp_path: Path) -> None:
    path = str(_write(tmp_path, FAILING))
    res = _invoke(path, "--json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert (out["checks_passed"], out["checks_total"]) == (2, 3)
    assert [c["id"] for c in out["cases"]] == ["cli/stale", "cli/wrong-label"]
    allowed = _invoke(path, "--allow-fail")
    assert allowed.exit_code == 0
    assert "cli/wrong-label" in allowed.stdout and "2/3" in allowed.stdout


def test_cli_malformed_file_exit_2(tmp_path: Path) -> None:
    res = _invoke(str(_write(tmp_path, [GOOD, GOOD])))
    assert res.exit_code == 2
    assert "duplicated" in res.stderr


_SAME_EVERY_RUN = """
import json, sys
from pathlib import Path
from stateguard.lineage.cases import check_cases, load_cases
summary = check_cases(load_cases(Path(sys.argv[1])), jobs=1)
print(json.dumps(summary.model_dump(mode="json"), sort_keys=True))
"""


@pytest.mark.kernel
def test_a_case_file_gives_the_same_result_under_every_hash_seed(tmp_path: Path) -> None:
    """Sets of names iterate in another order in every process (string hashing is salted
    per process); verdicts and explanations must not follow that order."""
    import os
    import subprocess
    import sys

    cases = [c for c in json.loads(RULE_CASES.read_text()) if c["id"].startswith("rules/list")]
    assert cases
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _SAME_EVERY_RUN, str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        for case in result.get("cases", []):
            case.pop("seconds", None)
        result.pop("seconds", None)
        outputs.add(json.dumps(result, sort_keys=True))
    assert len(outputs) == 1
