"""The audit installed in a real kernel beside lineage: join guard and operators.

This is the wiring a composition root uses: `TrackedSession(setup_code=auditor.setup_code)`
and `auditor.observe(result.execution)` after each cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lake_fixture import build_lake

from stateguard.audit.auditor import Auditor, AuditSettings
from stateguard.audit.observations import ProbeObservation, ScanObservation
from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kernel-lake")
    build_lake(root)
    return root / "lake"


@pytest.fixture(scope="module")
def session(
    lake: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TrackedSession, Auditor]]:
    ledger = tmp_path_factory.mktemp("run") / "audit.jsonl"
    # the lake is the kernel's read-only data directory, seen as `data/` from its cwd
    auditor = Auditor(AuditSettings(join_guard="flag", lake="data"), ledger_path=ledger)
    kernel = KernelSession(data_dir=lake, default_timeout=60)
    ts = TrackedSession(kernel, setup_code=auditor.setup_code)
    ts.start()
    try:
        yield ts, auditor
    finally:
        ts.stop()


def test_operators_run_in_the_kernel_and_land_in_the_host_ledger(
    session: tuple[TrackedSession, Auditor],
) -> None:
    ts, auditor = session
    ts.reset()
    res = ts.execute(
        "acres = Scan('nifc_acres_burned_by_state.csv', table='acres')\n"
        "p = Probe('acres', ['State'])\n"
        'top = Query("SELECT State, sum(AcresBurned) AS a FROM acres GROUP BY State '
        'ORDER BY a DESC LIMIT 1")\n'
        "print(top.State[0])"
    )
    assert res.execution.ok, res.execution.error
    assert res.execution.stdout.strip() == "CA"
    audit = auditor.observe(res.execution)
    assert [c.kind for c in audit.operators] == ["scan", "probe", "query"]
    assert isinstance(audit.operators[0].observation, ScanObservation)
    assert isinstance(audit.operators[1].observation, ProbeObservation)
    # lineage tracked the agent's variables, not the operator functions
    assert res.cell is not None
    created = {v.split("@")[0] for v in res.cell.created}
    assert {"acres", "p", "top"} <= created and "Scan" not in created
    cov = auditor.coverage()
    assert cov.sources["wildfires/nifc_acres_burned_by_state.csv"].profiled == ("State",)
    assert auditor.ledger.path is not None and auditor.ledger.path.read_text().count("\n") == 3


def test_a_rejected_operator_fails_the_cell_with_its_diagnostic(
    session: tuple[TrackedSession, Auditor],
) -> None:
    ts, auditor = session
    ts.reset()
    ok = ts.execute(
        "acres = Scan('nifc_acres_burned_by_state.csv', table='acres')\nProbe('acres', ['State'])"
    )
    assert ok.execution.ok
    auditor.observe(ok.execution)
    res = ts.execute("ca = Query(\"SELECT * FROM acres WHERE State = 'California'\")")
    assert res.execution.status == "error" and res.execution.error is not None
    assert res.execution.error.ename == "OperatorRejected"
    assert "no such value in the column" in res.execution.error.evalue
    audit = auditor.observe(res.execution)
    assert audit.has_errors
    (f,) = audit.findings
    assert (f.check, f.severity, f.basis) == ("filter_unseen_value", "alarm", ("code", "data"))
    assert f.facts["origin"] == "operator" and f.facts["level"] == "error"
    assert f.facts["calls"] == (str(audit.operators[0].seq - 1),)  # the probe
    assert audit.operators[0].status == "rejected"


def test_join_guard_findings_reach_the_observation_text(
    session: tuple[TrackedSession, Auditor],
) -> None:
    ts, auditor = session
    ts.reset()
    res = ts.execute(
        "import pandas as pd\n"
        "sales = pd.DataFrame({'year': [2018, 2019, 2020], 'v': [1, 2, 3]})\n"
        "targets = pd.DataFrame({'year': [2018, 2020], 't': [1, 2]})\n"
        "m = sales.merge(targets, on='year')\n"
    )
    assert res.execution.ok
    audit = auditor.observe(res.execution)
    (f,) = audit.findings
    assert f.facts["origin"] == "join_guard" and f.check == "dropped_rows"
    assert f.facts["line"] == 4 and f.facts["level"] == "warning" and f.facts["rows"] == 1
    assert (f.severity, f.basis, f.variables) == ("alarm", ("code", "data"), ("m",))
    assert audit.describe() == (
        "audit alarm: inner merge of `sales` and `targets` dropped 1 of 3 left rows "
        "(`sales`): `year` value 2019 is missing from the right side (`targets`); the call "
        "gives no how=, so this is pandas' default inner join (line 4)"
    )
    assert audit.alarms == audit.findings
    # lineage still sees the merge result as a new version
    assert res.cell is not None and "m@v1" in res.cell.created
    # the turn's question weighs the loss: a plain "merge" asked, a note; all rows asked, an alarm
    plain = auditor.observe(res.execution, "Merge sales and targets along the year")
    assert plain.alarms == () and plain.describe().startswith("audit note: inner merge")
    # the question made the code-only alarm a note
    assert [(f.severity, f.basis) for f in plain.findings] == [
        ("note", ("code", "data", "question"))
    ]
    every = auditor.observe(res.execution, "Merge sales with targets, keeping all rows of sales")
    assert [f.check for f in every.alarms] == ["dropped_rows"]
    assert "the question asks to keep unmatched rows (line 4)" in every.describe()


def test_the_guard_survives_restart_and_reset(session: tuple[TrackedSession, Auditor]) -> None:
    ts, auditor = session
    ts.restart()
    res = ts.execute(
        "import pandas as pd\n"
        "a = pd.DataFrame({'k': [1, 2]}); b = pd.DataFrame({'j': [3, 4]})\n"
        "x = a.merge(b, how='cross')\n"
        "n = len(Discover('acres burned'))"
    )
    assert res.execution.ok, res.execution.error
    audit = auditor.observe(res.execution)
    assert [f.check for f in audit.findings] == ["cross_product"]
    assert [c.kind for c in audit.operators] == ["discover"]


def test_files_the_agents_own_code_reads_are_noted(
    session: tuple[TrackedSession, Auditor],
) -> None:
    ts, auditor = session
    ts.reset()
    res = ts.execute(
        "import pandas as pd, json\n"
        "acres = pd.read_csv('data/wildfires/nifc_acres_burned_by_state.csv')\n"
        "stations = json.load(open('data/stations/weather_stations.json'))\n"
        "open('notes.txt', 'w').write('x')\n"  # outside the lake: not a source
    )
    assert res.execution.ok, res.execution.error
    audit = auditor.observe(res.execution)
    assert audit.files_read == (
        "wildfires/nifc_acres_burned_by_state.csv",
        "stations/weather_stations.json",
    )
    assert auditor.never_looked_at(
        ["wildfires/nifc_acres_burned_by_state.csv", "population/state_abbreviations.csv"]
    ) == ("population/state_abbreviations.csv",)
    quiet = ts.execute("n = len(acres)")
    assert auditor.observe(quiet.execution).files_read == ()
