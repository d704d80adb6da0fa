"""The KramaBench-shaped example with the real files' traits (examples/kramabench_legal):
read by the bench loader, `bench run` and `audit discover-eval`, its tables through the
source map."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from stateguard.audit.discover_eval import discover_eval
from stateguard.audit.sources import index_lake
from stateguard.bench.loaders import load_suite
from stateguard.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kramabench_legal"
WORKLOAD = EXAMPLE / "workload" / "legal.json"
LAKE = EXAMPLE / "data" / "legal" / "input"


def test_loader_resolves_every_trait_and_skips_the_unmatched_source_by_task_id() -> None:
    loaded = load_suite("kramabench", WORKLOAD)  # the lake is found as KramaBench lays it out
    assert not loaded.rejected
    tasks = {t.task_id: t for t in loaded.tasks}
    assert len(tasks) == 7 and all(t.data_dir == LAKE.resolve() for t in tasks.values())
    skipped = {tid: t.skipped_reason for tid, t in tasks.items() if t.skipped}
    assert list(skipped) == ["legal-easy-7"]
    assert "'2024_CSN_Consumer_Sentinel_Summary.csv' (legal-easy-7)" in skipped["legal-easy-7"]

    easy = tasks["legal-easy-1"].turns[0].meta  # a string, found three folders deep
    assert easy["source_files"] == [
        "csn-data-book-2024-csv/CSVs/2024_CSN_Number_of_Reports_by_Type.csv"
    ]
    hard = tasks["legal-hard-3"]
    assert [t.meta["id"] for t in hard.turns] == [
        "legal-hard-3-1",
        "legal-hard-3-2",
        "legal-hard-3",
    ]
    assert len(hard.turns[2].meta["source_files"]) == 3  # the glob: every state file
    assert hard.turns[1].meta["source_notes"][0].startswith("'Alaska.csv': ambiguous")
    folder = tasks["legal-hard-4"].turns[0].meta
    assert len(folder["source_files"]) == 3
    assert "ignoring letter case" in folder["source_notes"][0]


def test_discover_eval_scores_the_resolved_files_and_reports_what_it_had_to_do() -> None:
    result = discover_eval(WORKLOAD, LAKE)
    assert result.tasks == 6 and result.skipped_without_sources == 1
    assert result.tasks_unresolved == ("legal-easy-7: '2024_CSN_Consumer_Sentinel_Summary.csv'",)
    by_id = {t.id: t for t in result.per_task}
    assert len(by_id["legal-hard-3"].files) == 3
    assert any("ignoring letter case" in n for n in by_id["legal-hard-4"].notes)
    assert any("ambiguous" in n for n in by_id["legal-easy-6"].notes)
    assert result.recall_at_10 >= 0.9


def test_discover_eval_command_finds_the_lake_and_prints_the_notes() -> None:
    result = CliRunner().invoke(app, ["audit", "discover-eval", str(WORKLOAD)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "matched ignoring letter case" in said
    assert "no file of the lake matches the source of legal-easy-7" in said
    data = json.loads(
        CliRunner().invoke(app, ["audit", "discover-eval", str(WORKLOAD), "--json"]).stdout
    )
    assert data["sources_unresolved"] == 1 and data["recall_at_10"] >= 0.9


def test_source_map_reads_preamble_csvs_html_and_numbers_written_for_people() -> None:
    sources = {s.id: s for s in index_lake(LAKE).sources}
    by_type = sources["csn-data-book-2024-csv/CSVs/2024_CSN_Number_of_Reports_by_Type.csv"]
    assert [c.name for c in by_type.columns] == ["Year", "Fraud", "Identity Theft", "Other"]
    assert by_type.rows == 3 and by_type.columns[1].dtype == "float64"
    ages = sources["csn-data-book-2024-csv/CSVs/2024_CSN_Fraud_Losses_by_Age.csv"]
    assert [c.dtype for c in ages.columns][1:] == ["float64"] * 3
    assert "755200000" in ages.preview.replace(".0", "") or "7.552" in ages.preview
    state = sources["csn-data-book-2024-csv/State MSA Identity Theft Data/Arizona.csv"]
    assert [c.name for c in state.columns] == ["Metropolitan Area", "Reports"]
    html = sources["enforcement/html/ftc-enforcement-actions-2024.html"]
    assert html.kind == "table" and html.columns[2].dtype == "float64"


def test_bench_run_reads_the_workload(tmp_path: Path) -> None:
    """The replay worker has no reference code to run: every turn is lost, and said so."""
    out = tmp_path / "run"
    args = ["bench", "run", "--suite", "kramabench", "--path", str(WORKLOAD), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "turns scored: 0 / 9" in said
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tasks_rejected"] == 0 and metrics["turns_total"] == 9
    assert metrics["skipped_by_reason"] == {
        "no reference code": 8,
        "data source matching no file of the lake": 1,
    }
