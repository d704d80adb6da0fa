"""Typed operators over the fixture lake, and each validation rule: a case it must catch
and a near miss it must let through."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from lake_fixture import build_lake

from stateguard.audit.errors import OperatorRefused, SourceMapError
from stateguard.audit.ledger import AuditLedger
from stateguard.audit.observations import (
    OperatorCall,
    ProbeObservation,
    QueryObservation,
    ScanObservation,
    UnionScanObservation,
)
from stateguard.audit.operators import AuditRuntime, OperatorRejected
from stateguard.audit.rules import rule_names
from stateguard.audit.sources import SourceMap, index_lake


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ops")
    build_lake(root)
    return root / "lake"


@pytest.fixture(scope="module")
def source_map(lake: Path) -> SourceMap:
    return index_lake(lake)


@pytest.fixture
def rt(lake: Path, source_map: SourceMap, tmp_path: Path) -> AuditRuntime:
    return AuditRuntime(lake, source_map=source_map, ledger=AuditLedger(tmp_path / "audit.jsonl"))


def _rules(call: OperatorCall) -> set[str]:
    return {f.check for f in call.findings}


# -- operators -------------------------------------------------------------------------


def test_discover_records_paths_and_scores(rt: AuditRuntime) -> None:
    paths = rt.discover("acres burned by state", excluded=["*largest*"], k=3)
    assert paths[0] == "wildfires/nifc_acres_burned_by_state.csv"
    assert "wildfires/largest_fires.html" not in paths
    call = rt.last
    assert call.kind == "discover" and call.status == "ok"
    assert call.args["excluded"] == ["*largest*"]
    assert call.observation is not None and call.observation.paths == tuple(paths)  # type: ignore[union-attr]


def test_scan_records_provenance_schema_rows_and_preview(rt: AuditRuntime) -> None:
    frame = rt.scan("fire_causes_2020.xlsx", sheet="Lightning")
    obs = rt.last.observation
    assert isinstance(obs, ScanObservation)
    assert obs.table == "fire_causes_2020_lightning" and obs.rows == len(frame) == 5
    assert obs.location.sheet == "Lightning" and obs.source.endswith("#Lightning")
    assert [c.name for c in obs.columns] == ["region", "fires"]
    assert "CA" in obs.preview and obs.preview_rows == 5 and len(obs.signature) == 64
    assert rt.last.inputs == ("wildfires/fire_causes_2020.xlsx#Lightning",)


def test_scan_names_what_is_wrong(rt: AuditRuntime) -> None:
    with pytest.raises(SourceMapError, match="holds several sources"):
        rt.scan("fire_causes_2020.xlsx")
    with pytest.raises(SourceMapError, match=r"no source 'nope\.csv'"):
        rt.scan("nope.csv")
    with pytest.raises(OperatorRefused, match="is not a table"):
        rt.scan("sea_level_notes.md")
    assert rt.last.status == "error" and "is not a table" in (rt.last.error or "")


def test_union_scan_labels_sources_and_counts_rows(rt: AuditRuntime) -> None:
    union = rt.union_scan(
        [
            "wildfires/fire_causes_2020.xlsx#Human caused",
            "wildfires/fire_causes_2020.xlsx#Lightning",
        ],
        source_column="cause",
        table="causes",
    )
    obs = rt.last.observation
    assert isinstance(obs, UnionScanObservation)
    assert len(union) == 10 and set(union["cause"]) == set(obs.sources)
    assert list(obs.rows_per_source.values()) == [5, 5]
    assert obs.missing_columns == {}
    assert "union_fills_nulls" not in _rules(rt.last)  # near miss: same columns


def test_union_scan_reports_columns_missing_in_some_sources(rt: AuditRuntime) -> None:
    rt.union_scan(["nifc_acres_burned_by_state.csv", "us_state_population_2020.csv"])
    obs = rt.last.observation
    assert isinstance(obs, UnionScanObservation)
    assert obs.missing_columns["population"] == ("wildfires/nifc_acres_burned_by_state.csv",)
    (finding,) = rt.last.findings
    assert finding.check == "union_fills_nulls" and finding.severity == "note"
    assert finding.basis == ("data",)
    assert "`population` is missing from wildfires/nifc_acres_burned_by_state.csv" in (
        finding.message
    )


def test_probe_reports_frequencies_ranges_nulls_and_distinct(rt: AuditRuntime) -> None:
    rt.scan("nifc_acres_burned_by_state.csv", table="acres")
    obs = rt.probe("acres", ["State", "AcresBurned"])
    state, acres = obs.profiles
    assert state.distinct == 5 and state.values_complete and dict(state.top)["CA"] == 2
    assert acres.min == 90_000 and acres.max == 4_304_379 and acres.null_rate == 0.0
    with pytest.raises(OperatorRefused, match=r"has no column\(s\) \['Acres'\]"):
        rt.probe("acres", ["Acres"])


def test_query_runs_duckdb_and_registers_the_output(rt: AuditRuntime) -> None:
    rt.scan("nifc_acres_burned_by_state.csv", table="acres")
    out = rt.query(
        "SELECT State, sum(AcresBurned) AS acres FROM acres GROUP BY State ORDER BY acres DESC",
        inputs=["acres"],
        output="by_state",
    )
    obs = rt.last.observation
    assert isinstance(obs, QueryObservation)
    assert obs.rows == 5 and obs.records[0] == {"State": "CA", "acres": 4_564_202}
    assert "by_state" in rt.tables and len(out) == 5
    with pytest.raises(OperatorRefused, match=r"input\(s\) \['nope'\] are not registered"):
        rt.query("SELECT 1", inputs=["nope"])


def test_batch_runs_in_order_and_stops_at_a_rejection(rt: AuditRuntime) -> None:
    results = rt.batch(
        [
            ("scan", {"file": "nifc_acres_burned_by_state.csv", "table": "acres"}),
            ("probe", {"table": "acres", "columns": ["State"]}),
            ("query", {"sql": "SELECT count(*) AS n FROM acres"}),
        ]
    )
    assert isinstance(results[1], ProbeObservation) and int(results[2]["n"][0]) == 10
    with pytest.raises(OperatorRejected):
        rt.batch(
            [
                ("query", {"sql": "SELECT * FROM acres WHERE State = 'California'"}),
                ("probe", {"table": "acres"}),
            ]
        )
    assert rt.last.kind == "query" and rt.last.status == "rejected"
    with pytest.raises(OperatorRefused, match="unknown operator 'sql'"):
        rt.batch([("sql", {})])


def test_bash_runs_read_only_pipelines_in_the_lake(rt: AuditRuntime) -> None:
    assert rt.bash("ls wildfires | wc -l").strip() == "3"
    assert rt.bash("head -n 2 wildfires/nifc_acres_burned_by_state.csv").startswith(
        "State,Year,AcresBurned"
    )
    obs = rt.last.observation
    assert obs is not None and obs.exit_status == 0  # type: ignore[union-attr]
    rt.bash("grep -c Nevada population/*.csv")
    assert "us_state_population_2020.csv:1" in rt.last.observation.output  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -rf wildfires", "'rm' is not a read-only"),
        ("ls > listing.txt", "'>' is not allowed"),
        ("ls; ls", "';' is not allowed"),
        ("cat $(ls)", "'$(' is not allowed"),
        ("find . -delete", "find '-delete' can write"),
        ("sort -o out.csv x.csv", "sort '-o' can write"),
        ("curl http://127.0.0.1", "'curl' is not a read-only"),
        ("cat ../../etc/passwd", "outside the data lake"),
        ("head /etc/passwd", "outside the data lake"),
    ],
)
def test_bash_refuses_writes_network_and_escapes(
    rt: AuditRuntime, command: str, reason: str
) -> None:
    with pytest.raises(OperatorRefused, match=reason.replace("(", r"\(").replace("$", r"\$")):
        rt.bash(command)
    assert rt.last.status == "error"


# -- the ledger and coverage -------------------------------------------------------------


def test_ledger_persists_typed_calls_and_reloads_them(rt: AuditRuntime, tmp_path: Path) -> None:
    rt.scan("nifc_acres_burned_by_state.csv", table="acres")
    rt.probe("acres", ["State"])
    with pytest.raises(OperatorRejected):
        rt.query("SELECT * FROM acres WHERE State = 'California'")
    reloaded = AuditLedger(tmp_path / "audit.jsonl")
    assert [c.kind for c in reloaded.calls] == ["scan", "probe", "query"]
    assert isinstance(reloaded.calls[1].observation, ProbeObservation)
    assert reloaded.calls == rt.ledger.calls and reloaded.next_seq == 4
    (f,) = reloaded.calls[2].findings  # the findings come back typed, facts and all
    assert (f.check, f.severity, f.facts) == ("filter_unseen_value", "alarm", {"calls": ("2",)})


def test_coverage_says_what_was_never_looked_at(rt: AuditRuntime) -> None:
    rt.scan("nifc_acres_burned_by_state.csv", table="acres")
    rt.probe("acres", ["State"])
    cov = rt.ledger.coverage()
    src = "wildfires/nifc_acres_burned_by_state.csv"
    assert cov.sources[src].rows == 10 and cov.sources[src].rows_shown == 5
    assert cov.sources[src].profiled == ("State",)
    assert cov.unprofiled(src, ["State", "AcresBurned"]) == ("AcresBurned",)
    assert cov.unobserved([src, "population/us_state_population_2020.csv"]) == (
        "population/us_state_population_2020.csv",
    )


# -- validation rules: positive case and near miss ---------------------------------------


def _load_states(rt: AuditRuntime) -> None:
    rt.scan("nifc_acres_burned_by_state.csv", table="acres")
    rt.scan("us_state_population_2020.csv", table="pop")
    rt.scan("state_abbreviations.csv", table="abbr")


def test_rule_join_without_key(rt: AuditRuntime) -> None:
    _load_states(rt)
    with pytest.raises(OperatorRejected, match=r"`acres` and `pop` .* 10×5 cross product"):
        rt.query("SELECT * FROM acres, pop")
    # near miss: the same comma join with its key in WHERE is a keyed join
    rt.query("SELECT * FROM acres a, abbr b WHERE a.State = b.abbr")
    assert "join_without_key" not in _rules(rt.last)


def test_rule_join_fan_out(rt: AuditRuntime) -> None:
    rt.tables["l"] = pd.DataFrame({"k": [1, 1, 2], "a": [1, 2, 3]})
    rt.tables["r"] = pd.DataFrame({"k": [1, 1, 1, 2], "b": [1, 2, 3, 4]})
    rt.tables["r1"] = pd.DataFrame({"k": [1, 2], "b": [1, 2]})
    with pytest.raises(OperatorRejected, match=r"unique in neither .*\(1: 2×3 rows\)"):
        rt.query("SELECT * FROM l JOIN r USING (k)")
    rt.query("SELECT * FROM l JOIN r1 USING (k)")  # near miss: many-to-one
    assert rt.last.status == "ok" and "join_fan_out" not in _rules(rt.last)


def test_rule_join_drops_rows_names_the_missing_year(rt: AuditRuntime) -> None:
    rt.tables["sales"] = pd.DataFrame({"year": [2018, 2019, 2020] * 2, "v": range(6)})
    rt.tables["targets"] = pd.DataFrame({"year": [2018, 2020], "t": [1, 2]})
    rt.tables["targets_all"] = pd.DataFrame({"year": [2018, 2019, 2020], "t": [1, 2, 3]})
    out = rt.query("SELECT * FROM sales s JOIN targets t ON s.year = t.year")
    assert len(out) == 4  # flagged, not rejected: the rows may be meant to go
    (f,) = [f for f in rt.last.findings if f.check == "join_drops_rows"]
    assert f.severity == "note" and "dropped 2 of 6 left rows" in f.message
    assert f.basis == ("code", "data")
    assert "2019 is missing from the right side (`targets`)" in f.message
    rt.query("SELECT * FROM sales s JOIN targets_all t ON s.year = t.year")
    assert "join_drops_rows" not in _rules(rt.last)


def test_rule_join_key_mismatch_and_format(rt: AuditRuntime) -> None:
    _load_states(rt)
    with pytest.raises(OperatorRejected, match=r"barely overlap: 0 of 5 .*'California'"):
        rt.query("SELECT * FROM acres a JOIN pop p ON a.State = p.state")
    rt.tables["lower"] = pd.DataFrame({"abbr": ["ca ", "or", "wa", "nv", "az"], "x": 1})
    with pytest.raises(OperatorRejected, match="written differently"):
        rt.query("SELECT * FROM acres a JOIN lower l ON a.State = l.abbr")
    # near miss: the abbreviation table bridges the two spellings
    rt.query("SELECT * FROM acres a JOIN abbr b ON a.State = b.abbr JOIN pop p ON p.state = b.name")
    assert "join_key_mismatch" not in _rules(rt.last)


def test_rule_filter_unseen_value(rt: AuditRuntime) -> None:
    rt.scan("nifc_acres_burned_by_state.csv", table="acres")
    # not probed yet: no evidence to hold the filter against
    rt.query("SELECT * FROM acres WHERE State = 'California'")
    assert "filter_unseen_value" not in _rules(rt.last)
    rt.probe("acres", ["State"])
    with pytest.raises(OperatorRejected, match=r"State = 'California': no such value .* 'CA'"):
        rt.query("SELECT * FROM acres WHERE State = 'California'")
    assert rt.last.findings[0].facts["calls"] == (str(rt.last.seq - 1),)  # the probe
    rt.query("SELECT * FROM acres WHERE State IN ('CA', 'NV')")  # near miss: seen values
    assert "filter_unseen_value" not in _rules(rt.last)


def test_rule_aggregate_high_nulls(rt: AuditRuntime) -> None:
    rt.tables["prices"] = pd.DataFrame({"p": [1.0, None, None, 4.0, 5.0]})
    rt.probe("prices")
    rt.query("SELECT avg(p) AS m FROM prices")
    (f,) = rt.last.findings
    assert f.check == "aggregate_high_nulls" and "40% nulls of prices.p" in f.message
    assert f.severity == "note" and f.facts["calls"] == (str(rt.last.seq - 1),)  # the probe
    rt.query("SELECT avg(p) AS m FROM prices WHERE p IS NOT NULL")  # near miss: handled
    assert rt.last.findings == ()
    rt.query("SELECT avg(coalesce(p, 0)) AS m FROM prices")
    assert rt.last.findings == ()


def test_flag_mode_records_but_does_not_refuse(lake: Path, source_map: SourceMap) -> None:
    rt = AuditRuntime(lake, source_map=source_map, mode="flag")
    _load_states(rt)
    out = rt.query("SELECT * FROM acres, pop")
    assert len(out) == 50 and rt.last.status == "ok"
    assert rt.last.findings[0].severity == "alarm"
    assert rt.last.describe().startswith("reject [join_without_key]: ")


def test_every_rule_is_registered() -> None:
    assert set(rule_names()) == {
        "join_without_key",
        "join_fan_out",
        "join_drops_rows",
        "join_key_mismatch",
        "filter_unseen_value",
        "aggregate_high_nulls",
        "union_fills_nulls",
    }
