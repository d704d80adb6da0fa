"""`TrackedSession` against a real kernel: mutation detection, aliasing, failures.

One kernel serves the whole module; every test starts from `reset()` (empty
namespace, new graph). Tests that kill the kernel restart it themselves.
"""

from __future__ import annotations

import pytest

from stateguard.lineage import TrackedResult, TrackedSession

pytestmark = pytest.mark.kernel


@pytest.fixture
def ts(tracked: TrackedSession) -> TrackedSession:
    """The module's tracked kernel with an empty namespace and a new graph."""
    if not tracked.kernel.is_alive():
        tracked.restart()
    tracked.reset()
    return tracked


def run(ts: TrackedSession, *cells: str) -> list[TrackedResult]:
    """Execute cells that must succeed and be recorded."""
    out = []
    for c in cells:
        res = ts.execute(c)
        assert res.execution.ok, (c, res.execution.error)
        assert res.cell is not None, f"no lineage record for {c!r}"
        out.append(res)
    return out


def stale_after(ts: TrackedSession, code: str) -> bool:
    """Whether running `code` read a stale version."""
    (res,) = run(ts, code)
    assert res.cell is not None
    return res.cell.read_stale


def version_keys(ts: TrackedSession, name: str) -> list[str]:
    """Every version key of `name` so far."""
    return [v.key for v in ts.graph.versions(name)]


# ---------------------------------------------------------------------------
# in-place mutation is detected and makes earlier derivations stale

PANDAS = [
    "import pandas as pd\nimport numpy as np",
    "df = pd.DataFrame({'x': [1.0, np.nan, 3.0], 'y': [1, 2, 3]})",
    "m = df['y'].sum()",
]
NUMPY = ["import numpy as np", "arr = np.arange(4.0)", "m = arr.sum()"]

MUTATIONS = [
    pytest.param(PANDAS, "df.dropna(inplace=True)", "df", id="pandas-inplace-kwarg"),
    pytest.param(PANDAS, "df.loc[0, 'y'] = 9", "df", id="pandas-loc"),
    pytest.param(PANDAS, "df.at[1, 'y'] = 0", "df", id="pandas-at"),
    pytest.param(PANDAS, "df.columns = ['p', 'q']", "df", id="pandas-columns-assigned"),
    pytest.param(
        PANDAS, "df.sort_values('y', ascending=False, inplace=True)", "df", id="pandas-sort-inplace"
    ),
    pytest.param(["d = {'k': 1}", "m = d['k'] * 2"], "d['k'] = 2", "d", id="dict-item"),
    pytest.param(
        ["class Box:\n    pass", "b = Box()\nb.a = 1", "m = b.a + 1"],
        "b.a = 2",
        "b",
        id="attribute",
    ),
    pytest.param(["xs = [1, 2]", "m = len(xs)"], "xs.append(3)", "xs", id="list-append"),
    pytest.param(["s = {1}", "m = len(s)"], "s.add(2)", "s", id="set-add"),
    pytest.param(NUMPY, "arr *= 2", "arr", id="numpy-augassign"),
    pytest.param(NUMPY, "arr[0] = 5", "arr", id="numpy-item"),
    pytest.param(NUMPY, "np.multiply(arr, 3, out=arr)", "arr", id="numpy-out-argument"),
    pytest.param(NUMPY, "arr.fill(7.0)", "arr", id="numpy-fill"),
    pytest.param([*NUMPY, "v = arr[1:]"], "v *= 2", "arr", id="numpy-view"),
    pytest.param(
        ["def add(xs):\n    xs.append(1)", "data = [0]", "m = len(data)"],
        "add(data)",
        "data",
        id="function-mutates-argument",
    ),
    pytest.param(
        ["log = []", "def push():\n    log.append(1)", "m = len(log)"],
        "push()",
        "log",
        id="function-mutates-global-it-reads",
    ),
    pytest.param(
        [
            "log = []",
            "def inner():\n    log.append(1)",
            "def outer():\n    inner()",
            "m = len(log)",
        ],
        "outer()",
        "log",
        id="function-chain-mutates-global",
    ),
    pytest.param(
        ["class Cfg:\n    pass", "cfg = Cfg()\ncfg.alpha = 0.05", "m = cfg.alpha"],
        "setattr(cfg, 'alpha', 0.01)",
        "cfg",
        id="setattr",
    ),
    pytest.param(
        ["xs = [1]", "holder = {'data': xs}", "m = sum(holder['data'])"],
        "xs.append(5)",
        "holder",
        id="object-held-in-dict",
    ),
    pytest.param(
        [
            "class Counter:\n    def __init__(self):\n        self.n = 0\n"
            "    def hit(self):\n        self.n += 1",
            "c = Counter()",
            "m = c.n + 1",
        ],
        "c.hit()",
        "c",
        id="method-mutates-self",
    ),
]


# changes to other columns than the one `m` read: a new version of the frame, `m` fresh
OTHER_PARTS = [
    pytest.param(PANDAS, "df['z'] = df['y'] * 2", "df", id="pandas-new-column"),
    pytest.param(PANDAS, "df.pop('x')", "df", id="pandas-pop"),
    pytest.param(PANDAS, "df.insert(0, 'w', 1)", "df", id="pandas-insert"),
    pytest.param(PANDAS, "del df['x']", "df", id="pandas-del-column"),
]


@pytest.mark.parametrize(("setup", "mutation", "name"), OTHER_PARTS)
def test_mutation_of_other_parts_keeps_readers_fresh(
    ts: TrackedSession, setup: list[str], mutation: str, name: str
) -> None:
    run(ts, *setup)
    before = version_keys(ts, name)
    (res,) = run(ts, mutation)
    assert len(version_keys(ts, name)) == len(before) + 1
    assert res.cell is not None and f"{name}@v{len(before) + 1}" in res.cell.created
    assert "m@v1" not in ts.graph.stale_live_versions()
    assert not stale_after(ts, "print(m)")
    assert stale_after(ts, f"print({name})") is False  # the whole is current too


@pytest.mark.parametrize(("setup", "mutation", "name"), MUTATIONS)
def test_mutation_creates_version_and_stales_derivations(
    ts: TrackedSession, setup: list[str], mutation: str, name: str
) -> None:
    run(ts, *setup)
    before = version_keys(ts, name)
    (res,) = run(ts, mutation)
    latest = ts.graph.latest(name)
    assert latest is not None
    assert version_keys(ts, name) == [*before, f"{name}@v{len(before) + 1}"]
    # changed as a whole, or in parts that the readers of m read
    assert latest.kind in ("mutate", "part")
    assert res.cell is not None and latest.key in res.cell.created
    assert "m@v1" in ts.graph.stale_live_versions()
    assert stale_after(ts, "print(m)")


def test_numpy_view_mutation_versions_base(ts: TrackedSession) -> None:
    run(ts, *NUMPY, "v = arr[1:]", "v *= 2")
    assert ts.graph.latest("arr") is not None
    assert ts.graph.latest("arr").kind == "mutate"  # type: ignore[union-attr]
    assert ts.graph.latest("v").kind == "mutate"  # type: ignore[union-attr]


# ---------------------------------------------------------------------------
# aliasing


def test_alias_mutation_versions_both_names(ts: TrackedSession) -> None:
    run(ts, "xs = [1, 2]", "ys = xs", "total = sum(xs)", "ys.append(3)")
    assert version_keys(ts, "xs") == ["xs@v1", "xs@v2"]
    assert version_keys(ts, "ys") == ["ys@v1", "ys@v2"]
    assert stale_after(ts, "print(total)")


@pytest.mark.parametrize(
    ("cells", "reads"),
    [
        pytest.param(
            ["xs = [1, 2]", "ys = xs", "ys.append(3)"], ["print(xs)", "print(ys)"], id="list-alias"
        ),
        pytest.param(
            ["xs = [1]", "holder = {'data': xs}", "xs.append(5)"],
            ["print(holder)", "print(xs)"],
            id="held-in-dict",
        ),
        pytest.param(
            ["import numpy as np", "arr = np.arange(4.0)", "v = arr[1:]", "v *= 2"],
            ["print(arr)", "print(v)"],
            id="numpy-view",
        ),
    ],
)
def test_reading_mutated_object_through_any_alias_is_fresh(
    ts: TrackedSession, cells: list[str], reads: list[str]
) -> None:
    """Every name bound to the changed object shows its current content."""
    run(ts, *cells)
    assert ts.graph.stale_live_versions() == {}
    for code in reads:
        assert not stale_after(ts, code), code


def test_copy_breaks_alias(ts: TrackedSession) -> None:
    run(ts, "xs = [1, 2]", "ys = list(xs)", "total = sum(xs)", "ys.append(3)")
    assert version_keys(ts, "xs") == ["xs@v1"]
    assert not stale_after(ts, "print(total)")


# ---------------------------------------------------------------------------
# no change, no version


def test_non_mutating_calls_create_no_version(ts: TrackedSession) -> None:
    run(ts, *PANDAS, "xs = [3, 1, 2]")
    results = run(
        ts, "df.dropna()", "sorted(xs)", "df.describe()\nxs.copy()", "s = df['y']\ns[0] = 99"
    )
    assert all(r.cell is not None and "df@v2" not in r.cell.created for r in results)
    assert version_keys(ts, "df") == ["df@v1"]
    assert version_keys(ts, "xs") == ["xs@v1"]
    assert not stale_after(ts, "print(m)")


def test_rebinding_equal_scalar_or_same_object_creates_no_version(ts: TrackedSession) -> None:
    run(ts, "x = 1", "xs = [1]", "y = x + len(xs)")
    (res,) = run(ts, "x = 1\nalias = xs\nxs = alias")
    assert res.cell is not None and set(res.cell.unchanged) >= {"x", "xs"}
    assert version_keys(ts, "x") == ["x@v1"] and version_keys(ts, "xs") == ["xs@v1"]
    assert not stale_after(ts, "print(y)")
    run(ts, "x = 1.0")  # equal value, different type: a revision
    assert version_keys(ts, "x") == ["x@v1", "x@v2"]
    assert stale_after(ts, "print(y)")


def test_recompute_clears_staleness(ts: TrackedSession) -> None:
    run(ts, "a = 1", "b = a * 2", "a = 2")
    assert set(ts.graph.stale_live_versions()) == {"b@v1"}
    run(ts, "b = a * 2")
    assert ts.graph.stale_live_versions() == {}
    assert not stale_after(ts, "print(b)")


def test_function_rebinding_global(ts: TrackedSession) -> None:
    run(ts, "counter = 0", "def bump():\n    global counter\n    counter += 1", "d = counter * 2")
    (res,) = run(ts, "bump()")
    assert res.cell is not None and res.cell.created == ("counter@v2",)
    assert ts.graph.version("counter@v2").kind == "bind"
    assert stale_after(ts, "print(d)")


def test_function_reading_revised_global(ts: TrackedSession) -> None:
    run(ts, "tax = 0.2", "def net(x):\n    return x * (1 - tax)", "p = net(100)")
    assert "tax@v1" in ts.graph.derived_from("p@v1")
    run(ts, "tax = 0.25")
    assert stale_after(ts, "print(p)")


def test_large_frame_mutated_by_function_outside_sample(ts: TrackedSession) -> None:
    """A frame above the exact-hash size changed in place by a called function."""
    run(
        ts,
        "import pandas as pd\nimport numpy as np",
        "big = pd.DataFrame({'x': np.arange(300_000)})",
        "m = big['x'].sum()",
        "def fix(d):\n    d.loc[7, 'x'] = -1",
    )
    (res,) = run(ts, "fix(big)")
    assert res.cell is not None
    assert "big@v2" in res.cell.created
    assert stale_after(ts, "print(m)")


def test_large_frame_changed_by_function_after_a_syntactic_mutation(ts: TrackedSession) -> None:
    """The cheap (sampled) fingerprint taken after `big['y'] = ..` must not hide a later
    change of an unsampled row by a called function."""
    run(
        ts,
        "import pandas as pd\nimport numpy as np",
        "big = pd.DataFrame({'x': np.arange(300_000)})",
        "def fix(d):\n    d.loc[7, 'x'] = -1",
        "big['y'] = big['x'] * 2",
    )
    (res,) = run(ts, "fix(big)")  # right after the cheap fingerprint
    assert res.cell is not None
    assert "big@v3" in res.cell.created


LOAN = (
    "class Loan:\n    def __init__(self, p):\n        self.p = p\n"
    "    def interest(self):\n        return self.p * RATE"
)


def test_instantiation_reads_only_what_init_reads(ts: TrackedSession) -> None:
    """Creating an instance runs __init__, not every method of the class."""
    run(ts, "RATE = 0.05", LOAN, "loan = Loan(1000)")
    assert "RATE@v1" not in ts.graph.ancestors("loan@v1")
    run(ts, "RATE = 0.07")
    assert not stale_after(ts, "print(loan.p)")


def test_method_call_on_instance_reads_method_globals(ts: TrackedSession) -> None:
    run(ts, LOAN, "loan = Loan(1000)", "RATE = 0.05", "i = loan.interest()")
    assert "RATE@v1" in ts.graph.ancestors("i@v1")
    run(ts, "RATE = 0.07")
    assert stale_after(ts, "print(i)")


# ---------------------------------------------------------------------------
# failures


def test_syntax_error_cell_changes_no_lineage(ts: TrackedSession) -> None:
    run(ts, "a = 1")
    res = ts.execute("a = (")
    assert res.execution.status == "error"
    assert res.cell is not None and res.cell.syntax_error is not None
    assert res.cell.created == () and res.cell.reads == ()
    assert version_keys(ts, "a") == ["a@v1"]
    assert not stale_after(ts, "print(a)")


def test_runtime_error_records_only_writes_before_it(ts: TrackedSession) -> None:
    run(ts, "xs = [1]", "n = len(xs)")
    res = ts.execute("x = 10\nxs.append(2)\ny = x / 0\nz = 5")
    assert res.execution.status == "error"
    assert res.cell is not None
    assert res.cell.failed_statement == 2
    assert {"x@v1", "xs@v2"} <= set(res.cell.created)
    assert not any(k.startswith(("y", "z")) for k in res.cell.created)
    assert ts.graph.latest("y") is None and ts.graph.latest("z") is None
    (after,) = run(ts, "w = x + 1")
    assert ts.graph.derived_from("w@v1") == ("x@v1",)
    assert after.execution.ok
    assert stale_after(ts, "print(n)")


def test_kernel_death_then_restart(ts: TrackedSession) -> None:
    run(ts, "a = 1", "b = a + 1")
    res = ts.execute("import os\nos._exit(1)")
    assert res.execution.status == "dead"
    assert res.cell is None
    assert ts.graph.live_names() == ()
    assert ts.graph.stale_live_versions() == {}
    ts.restart()
    (res,) = run(ts, "c = 5")
    assert res.cell is not None and res.cell.created == ("c@v1",)
    run(ts, "d = c + 1")
    assert ts.graph.derived_from("d@v1") == ("c@v1",)
    assert ts.graph.live_names() == ("c", "d")
    run(ts, "c = 6")
    assert stale_after(ts, "print(d)")


def test_timeout_interrupts_and_tracking_continues(ts: TrackedSession) -> None:
    run(ts, "a = 1")
    res = ts.execute("while True:\n    pass", timeout=2)
    assert res.execution.status == "timeout"
    assert ts.kernel.is_alive()
    (res,) = run(ts, "b = a + 1")
    assert res.cell is not None and res.cell.created == ("b@v1",)
    assert ts.graph.derived_from("b@v1") == ("a@v1",)
    run(ts, "a = 2")
    assert stale_after(ts, "print(b)")


def test_readme_lineage_example_prints_what_it_says() -> None:
    """The lineage page's example (docs/lineage.md) runs as shown and prints its
    commented output."""
    import contextlib
    import io
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "lineage.md"
    section = page.read_text(encoding="utf-8").split("# Lineage in one example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    expected = [ln[2:] for ln in code.splitlines() if ln.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/lineage.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == "False"
    assert lines[1] == " ".join(expected)
