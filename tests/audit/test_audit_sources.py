"""The source map over a fixture lake: formats, schema, row counts, signatures, ranking."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lake_fixture import build_lake
from typer.testing import CliRunner

from stateguard.audit.discover_eval import discover_eval
from stateguard.audit.discovery import SourceIndex, looks_like_pattern, words
from stateguard.audit.errors import SourceMapError, WorkloadFormatError
from stateguard.audit.sources import SourceMap, index_lake
from stateguard.audit.workload import load_workload, matches_source
from stateguard.cli.main import app


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("krama")
    build_lake(root)
    return root


@pytest.fixture(scope="module")
def source_map(fixture_dir: Path) -> SourceMap:
    return index_lake(fixture_dir / "lake")


def test_every_format_is_indexed_with_location_schema_and_rows(source_map: SourceMap) -> None:
    by_id = {s.id: s for s in source_map.sources}
    csv = by_id["wildfires/nifc_acres_burned_by_state.csv"]
    assert csv.kind == "table" and csv.rows == 10
    assert [(c.name, c.dtype) for c in csv.columns] == [
        ("State", "str"),
        ("Year", "int64"),
        ("AcresBurned", "int64"),
    ]
    assert "CA" in csv.columns[0].sample
    tsv = by_id["climate/noaa_monthly_temperature.tsv"]
    assert tsv.rows == 6 and [c.name for c in tsv.columns] == ["station_id", "month", "temp_c"]
    lightning = by_id["wildfires/fire_causes_2020.xlsx#Lightning"]
    assert lightning.location.sheet == "Lightning" and lightning.rows == 5
    assert "wildfires/fire_causes_2020.xlsx#Human caused" in by_id
    html = by_id["wildfires/largest_fires.html"]
    assert html.location.table == 0 and html.location.caption == "Largest wildfires of 2020"
    assert html.rows == 2
    parquet = by_id["climate/mauna_loa_co2.parquet"]
    assert parquet.rows == 3 and [c.name for c in parquet.columns] == ["year", "co2_ppm"]
    js = by_id["stations/weather_stations.json"]
    assert js.rows == 3 and "elevation_m" in [c.name for c in js.columns]
    md = by_id["climate/sea_level_notes.md"]
    assert md.kind == "text" and "3.3 millimetres" in md.text and md.rows == 3
    broken = by_id["misc/broken.json"]
    assert broken.kind == "unreadable" and broken.error and "JSONDecodeError" in broken.error


def test_signature_changes_with_content_only(fixture_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "lake"
    shutil.copytree(fixture_dir / "lake", copy)
    before = {s.id: s.signature for s in index_lake(copy).sources}
    path = copy / "wildfires/nifc_acres_burned_by_state.csv"
    path.write_text(path.read_text().replace("4304379", "4304380"))
    after = {s.id: s.signature for s in index_lake(copy).sources}
    changed = [k for k in before if before[k] != after[k]]
    assert changed == ["wildfires/nifc_acres_burned_by_state.csv"]


def test_map_round_trips_and_names_unknown_ids(source_map: SourceMap, tmp_path: Path) -> None:
    source_map.save(tmp_path / "map.json")
    assert SourceMap.load(tmp_path / "map.json") == source_map
    with pytest.raises(SourceMapError, match=r"no source 'wildfires/nope\.csv'"):
        source_map.get("wildfires/nope.csv")
    with pytest.raises(SourceMapError, match="not a directory"):
        index_lake(tmp_path / "missing")


def test_words_split_stem_and_drop_stop_words() -> None:
    assert words("AcresBurned by_state in 2020") == ["acr", "burn", "state", "2020"]


def test_discover_ranks_by_query_and_honours_exclusions(source_map: SourceMap) -> None:
    index = SourceIndex(source_map)
    hits = index.discover("acres burned by wildfires per state")
    assert hits[0].path == "wildfires/nifc_acres_burned_by_state.csv"
    assert {"acr", "burn"} <= set(hits[0].matched)
    again = index.discover("acres burned by wildfires per state", excluded=[hits[0].path])
    assert hits[0].path not in [h.path for h in again]
    assert index.discover("lightning caused fires")[0].path == "wildfires/fire_causes_2020.xlsx"
    assert index.discover("zzz unknown words") == []


def test_discover_accepts_path_patterns(source_map: SourceMap) -> None:
    index = SourceIndex(source_map)
    assert [h.path for h in index.discover("*.tsv")] == ["climate/noaa_monthly_temperature.tsv"]
    assert {h.path for h in index.discover("population/")} == {
        "population/state_abbreviations.csv",
        "population/us_state_population_2020.csv",
    }
    excluded = index.discover("population/", excluded=["*abbreviations*"])
    assert [h.path for h in excluded] == ["population/us_state_population_2020.csv"]
    assert looks_like_pattern("sales.xlsx") and not looks_like_pattern("total sales 2019")


def test_gold_sources_match_by_name_suffix_or_pattern() -> None:
    assert matches_source("a/b/sales.csv", "sales.csv")
    assert matches_source("a/b/sales.csv", "b/sales.csv")
    assert matches_source("a/b/sales.csv", "*.csv")
    assert not matches_source("a/b/sales.csv", "ales.csv")
    assert not matches_source("a/b/sales.csv", "")


def test_discover_eval_on_the_fixture(fixture_dir: Path) -> None:
    result = discover_eval(fixture_dir / "workload.json", fixture_dir / "lake")
    assert result.tasks == 8 and result.files_indexed == 15
    assert result.recall_at_10 == 1.0 and result.recall_at_5 == 1.0
    assert result.recall_at_1 >= 0.8
    multi = next(t for t in result.per_task if t.id == "env-2")
    assert multi.missed_at_10 == ()


def test_discover_eval_cli_prints_json(fixture_dir: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "audit",
            "discover-eval",
            str(fixture_dir / "workload.json"),
            "--lake",
            str(fixture_dir / "lake"),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["tasks"] == 8 and data["recall_at_5"] == 1.0 and data["recall_at_10"] == 1.0


def test_workload_errors_name_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps([{"id": "t1"}]))
    with pytest.raises(WorkloadFormatError, match=r"w.json: tasks\[0\].query"):
        load_workload(bad)
    res = CliRunner().invoke(app, ["audit", "discover-eval", str(bad), "--lake", str(tmp_path)])
    assert res.exit_code == 2 and "tasks[0].query" in res.output


def test_subtasks_are_loaded(fixture_dir: Path) -> None:
    tasks = load_workload(fixture_dir / "workload.json")
    env2 = next(t for t in tasks if t.id == "env-2")
    assert [s.id for s in env2.subtasks] == ["env-2-1", "env-2-2"]
    turns = env2.turns()
    assert [t.id for t in turns] == ["env-2-1", "env-2-2", "env-2"]
    assert turns[-1].subtasks == () and turns[-1].answer == "Nevada"


def test_large_csv_is_sampled_but_fully_counted(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    body = "id,city\n" + "".join(f"{i},c{i % 7}\n" for i in range(5000))
    (lake / "big.csv").write_text(body)
    m = index_lake(lake, sample_bytes=1000, sample_rows=100)
    (src,) = m.sources
    assert src.sampled and src.rows == 5000
    assert [c.name for c in src.columns] == ["id", "city"]
    full = index_lake(lake)
    assert not full.sources[0].sampled and full.sources[0].rows == 5000
    (lake / "big.csv").write_text(body.replace("4999,", "5000,"))
    assert index_lake(lake, sample_bytes=1000).sources[0].signature != src.signature


def test_the_shipped_example_scores_as_documented() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "kramabench_mini"
    result = discover_eval(root / "workload.json", root / "lake")
    assert (result.tasks, result.recall_at_5, result.recall_at_10) == (8, 1.0, 1.0)


def test_files_of_other_formats_are_listed_and_findable_by_name(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports/wildfire_season_2020.pdf").write_bytes(b"%PDF-1.4 not parsed")
    (tmp_path / "a.csv").write_text("x\n1\n")
    m = index_lake(tmp_path)
    other = m.get("reports/wildfire_season_2020.pdf")
    assert other.kind == "other" and other.bytes == 19 and len(other.signature) == 64
    hits = SourceIndex(m).discover("wildfire season report")
    assert [h.path for h in hits] == ["reports/wildfire_season_2020.pdf"]
