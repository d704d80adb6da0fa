"""The join guard installed in a real kernel: private reports, rejection, no change.

One kernel serves the module; each test resets the namespace first.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stateguard.audit import JOIN_MIME, install_code, join_report
from stateguard.kernel import ExecutionResult, KernelSession

pytestmark = pytest.mark.kernel

SETUP = """
import pandas as pd
sales = pd.DataFrame({"year": [2018, 2019, 2020, 2021] * 50, "amount": range(200)})
targets = pd.DataFrame({"year": [2018, 2020, 2021], "target": [10.0, 20.0, 30.0]})
top_a = pd.DataFrame({"country": list("ABCDE"), "gdp": [5, 4, 3, 2, 1]})
top_b = pd.DataFrame({"country": list("EDCBA"), "pop": [9, 8, 7, 6, 5]})
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelSession]:
    with KernelSession(default_timeout=60) as k:
        yield k


def _silent(k: KernelSession, code: str) -> None:
    res = k.execute(code, silent=True, store_history=False)
    assert res.ok, res.error


@pytest.fixture
def k(kernel: KernelSession) -> Iterator[KernelSession]:
    _silent(kernel, "get_ipython().reset(new_session=False, aggressive=False)")
    _silent(kernel, install_code())
    ok = kernel.execute(SETUP)
    assert ok.ok, ok.error
    yield kernel
    _silent(
        kernel, "__import__('stateguard.audit.joinguard').audit.joinguard.uninstall_join_guard()"
    )


def _run(k: KernelSession, code: str) -> ExecutionResult:
    res = k.execute(code)
    assert res.ok, res.error
    return res


def test_inner_join_that_drops_a_year_is_reported_privately(k: KernelSession) -> None:
    res = _run(k, "m = sales.merge(targets, on='year')\nm.shape")
    assert res.result == "(150, 3)"  # the user's result is untouched
    assert all(JOIN_MIME not in d.data for d in res.displays)
    report = join_report(res.private)
    assert report is not None
    (rec,) = report.records
    assert rec.inputs[0].names == ("sales",) and rec.inputs[1].names == ("targets",)
    assert rec.line == 1 and rec.where == "<cell>" and rec.output_names == ("m",)
    (d,) = rec.diagnostics
    assert d.kind == "dropped_rows" and d.rows == 50 and d.keys == ("2019",)
    assert "inner merge of `sales` and `targets` dropped 50 of 200 left rows" in d.message
    assert "2019 is missing from the right side (`targets`)" in report.describe()


def test_positional_pairing_of_two_rankings_names_both_frames(k: KernelSession) -> None:
    res = _run(k, "both = pd.concat([top_a, top_b], axis=1)\nboth.shape")
    report = join_report(res.private)
    assert report is not None
    (d,) = report.diagnostics
    assert d.kind == "positional_pairing" and d.severity == "error"
    assert "`top_a` and `top_b`" in d.message and "`country`" in d.message


def test_calls_inside_user_functions_are_checked_with_their_line(k: KernelSession) -> None:
    res = _run(
        k,
        "def pair(a, b):\n    return a.merge(b, how='cross')\nx = pair(top_a, top_b)\n",
    )
    report = join_report(res.private)
    assert report is not None
    (rec,) = report.records
    assert rec.where == "pair" and rec.line == 2
    assert rec.diagnostics[0].kind == "cross_product"


def test_clean_cell_without_joins_publishes_nothing(k: KernelSession) -> None:
    res = _run(k, "total = sales['amount'].sum()")
    assert join_report(res.private) is None


def test_library_internal_calls_are_not_user_choices(k: KernelSession) -> None:
    # describe() and pivot_table call concat/merge internally: not recorded
    res = _run(k, "d = sales.describe()\np = sales.pivot_table(index='year', values='amount')")
    assert join_report(res.private) is None


def test_reject_mode_fails_the_cell_with_the_diagnostic(kernel: KernelSession) -> None:
    _silent(kernel, "get_ipython().reset(new_session=False, aggressive=False)")
    _silent(kernel, install_code("reject"))
    try:
        assert kernel.execute(SETUP).ok
        res = kernel.execute("x = pd.merge(top_a, top_b, how='cross')")
        assert res.status == "error" and res.error is not None
        assert res.error.ename == "JoinRejectedError"
        assert "5×5 cross product (25 rows)" in res.error.evalue
        assert "`top_a` and `top_b`" in res.error.evalue
        report = join_report(res.private)
        assert report is not None and report.mode == "reject"
        # warnings are reported, not rejected
        ok = kernel.execute("m = sales.merge(targets, on='year')")
        assert ok.ok
    finally:
        _silent(
            kernel,
            "__import__('stateguard.audit.joinguard').audit.joinguard.uninstall_join_guard()",
        )


NO_CHANGE_CELLS = (
    SETUP
    + """
import pickle, hashlib
results = [
    sales.merge(targets, on='year'),
    sales.merge(targets, on='year', how='left'),
    pd.merge(top_a, top_b, how='cross'),
    top_a.merge(top_b, on='country', how='outer', indicator=True),
    top_a.join(top_b, rsuffix='_b'),
    top_a.set_index('country').join(top_b.set_index('country'), how='inner'),
    pd.concat([top_a, top_b]),
    pd.concat([top_a, top_b], axis=1),
    pd.concat({'a': top_a, 'b': top_b}, names=['src']),
    pd.concat(f for f in (sales, sales)),
    sales.merge(sales, on='year').head(3),
]
inputs = [sales, targets, top_a, top_b]
digest = hashlib.sha256(pickle.dumps((results, inputs))).hexdigest()
print(digest)
"""
)


def test_results_are_byte_identical_with_and_without_the_guard(kernel: KernelSession) -> None:
    _silent(kernel, "get_ipython().reset(new_session=False, aggressive=False)")
    _silent(
        kernel, "__import__('stateguard.audit.joinguard').audit.joinguard.uninstall_join_guard()"
    )
    plain = kernel.execute(NO_CHANGE_CELLS)
    assert plain.ok, plain.error
    assert join_report(plain.private) is None
    _silent(kernel, "get_ipython().reset(new_session=False, aggressive=False)")
    _silent(kernel, install_code())
    try:
        guarded = kernel.execute(NO_CHANGE_CELLS)
        assert guarded.ok, guarded.error
        report = join_report(guarded.private)
        assert report is not None and len(report.records) == 11
        assert all(r.check_error is None for r in report.records)
        assert guarded.stdout == plain.stdout
        # pandas' own warnings still point at the user's line (and are not hidden)
        assert "Pandas4Warning" in plain.stderr
        assert guarded.stderr == plain.stderr
    finally:
        _silent(
            kernel,
            "__import__('stateguard.audit.joinguard').audit.joinguard.uninstall_join_guard()",
        )


def test_the_guard_waits_for_the_first_pandas_import() -> None:
    with KernelSession(default_timeout=60) as fresh:
        _silent(fresh, install_code())
        before = fresh.execute("import sys\nprint('pandas' in sys.modules)")
        assert before.stdout.strip() == "False"  # installing did not import pandas
        res = fresh.execute(
            "import pandas as pd\n"
            "a = pd.DataFrame({'k': [1, 2, 3]})\n"
            "m = a.merge(pd.DataFrame({'k': [1, 2]}), on='k')\n"
        )
        assert res.ok, res.error
        report = join_report(res.private)
        assert report is not None and [d.kind for d in report.diagnostics] == ["dropped_rows"]
        assert report.records[0].how_stated is False
