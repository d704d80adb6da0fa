"""KramaBench ``data_sources`` entries resolved against a lake's tree, as the real files
write them; and the workload shapes they come in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateguard.audit.source_refs import resolve_source, resolve_sources, resolved_files
from stateguard.audit.workload import load_workload

FILES = [
    "archive/2023/Top Categories.csv",
    "book/CSVs/2024_CSN_Reports.csv",
    "book/CSVs/Top Categories.csv",
    "book/State MSA Fraud and Other data/Alabama.csv",
    "book/State MSA Fraud and Other data/Alaska.csv",
    "book/State MSA Identity Theft Data/Alabama.csv",
    "book/State MSA Identity Theft Data/Alaska.csv",
    "html/cases (2024).html",
]
THEFT = (
    "book/State MSA Identity Theft Data/Alabama.csv",
    "book/State MSA Identity Theft Data/Alaska.csv",
)
FRAUD = (
    "book/State MSA Fraud and Other data/Alabama.csv",
    "book/State MSA Fraud and Other data/Alaska.csv",
)

# entry, files, kind, case ignored, ambiguous
CASES = [
    ("2024_CSN_Reports.csv", ("book/CSVs/2024_CSN_Reports.csv",), "file", False, False),
    ("CSVs/2024_CSN_Reports.csv", ("book/CSVs/2024_CSN_Reports.csv",), "file", False, False),
    ("./book/CSVs/2024_CSN_Reports.csv", ("book/CSVs/2024_CSN_Reports.csv",), "file", False, False),
    ("2024_csn_reports.CSV", ("book/CSVs/2024_CSN_Reports.csv",), "file", True, False),
    ("cases (2024).html", ("html/cases (2024).html",), "file", False, False),
    ("State MSA Identity Theft Data/*", THEFT, "glob", False, False),
    ("State MSA Identity Theft Data/", THEFT, "folder", False, False),
    ("State MSA Identity Theft Data", THEFT, "folder", False, False),
    ("State MSA Fraud and Other Data/", FRAUD, "folder", True, False),
    ("State MSA * Data/Alabama.csv", (THEFT[0],), "glob", False, False),
    ("*/Alaska.csv", (FRAUD[1], THEFT[1]), "glob", False, False),
    (
        "Top Categories.csv",
        ("archive/2023/Top Categories.csv", "book/CSVs/Top Categories.csv"),
        "file",
        False,
        True,
    ),
    ("Alabama.csv", (FRAUD[0], THEFT[0]), "file", False, True),
    ("Summary.csv", (), "file", False, False),
    ("Missing Folder/", (), "folder", False, False),
]


@pytest.mark.parametrize(("entry", "files", "kind", "folded", "ambiguous"), CASES)
def test_resolution(entry: str, files: tuple, kind: str, folded: bool, ambiguous: bool) -> None:
    got = resolve_source(entry, FILES)
    assert got.files == files
    assert (got.kind, got.case_insensitive, got.ambiguous) == (kind, folded, ambiguous)
    assert got.unresolved == (not files)


def test_notes_say_what_resolving_needed() -> None:
    assert resolve_source("2024_CSN_Reports.csv", FILES).note() is None
    assert "ignoring letter case" in resolve_source("State MSA Fraud and Other Data/", FILES).note()
    assert "ambiguous: 2 files" in resolve_source("Top Categories.csv", FILES).note()
    assert (
        resolve_source("Summary.csv", FILES).note() == "'Summary.csv' matches no file of the lake"
    )


def test_resolved_files_are_unique_and_ordered() -> None:
    got = resolve_sources(["Alabama.csv", "State MSA Identity Theft Data/*", "Alabama.csv"], FILES)
    assert len(got) == 2
    assert resolved_files(got) == (FRAUD[0], THEFT[0], THEFT[1])


def test_data_sources_as_string_list_or_null_at_every_level(tmp_path: Path) -> None:
    workload = tmp_path / "legal.json"
    sub = {"id": "t-1-1", "query": "q", "data_sources": "a b/c.csv"}
    tasks = [
        {"id": "t-1", "query": "q", "data_sources": "State MSA Identity Theft Data/*",
         "subtasks": [sub, {"id": "t-1-2", "query": "q", "data_sources": None}]},
        {"id": "t-2", "query": "q", "data_sources": ["x.csv", "y/"]},
    ]  # fmt: skip
    workload.write_text(json.dumps(tasks), encoding="utf-8")
    first, second = load_workload(workload)
    assert first.data_sources == ("State MSA Identity Theft Data/*",)
    assert first.subtasks[0].data_sources == ("a b/c.csv",)
    assert first.subtasks[1].data_sources == ()
    assert first.all_sources() == ("State MSA Identity Theft Data/*", "a b/c.csv")
    assert second.data_sources == ("x.csv", "y/")


def test_a_source_that_is_not_text_is_named(tmp_path: Path) -> None:
    from stateguard.audit.errors import WorkloadFormatError

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps([{"id": "t-1", "query": "q", "data_sources": {"a": 1}}]))
    with pytest.raises(WorkloadFormatError, match=r"tasks\[0\]\.data_sources"):
        load_workload(workload)
