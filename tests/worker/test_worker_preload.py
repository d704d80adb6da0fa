"""The worker's setup cell: which tables it loads, under which names."""

from __future__ import annotations

from pathlib import Path

import pytest

from stateguard.worker.preload import MAX_TABLES, plan_preload, variable_name
from stateguard.worker.run import describe_data


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("data/orders.csv", "orders"),
        ("data/2024 Sales-Q1.tsv", "df_2024_sales_q1"),
        ("data/pd.csv", "df_pd"),  # would shadow pandas
        ("data/list.csv", "df_list"),  # a builtin
        ("data/class.csv", "df_class"),  # a keyword
        ("data/sub/Ventes été.csv", "ventes_été"),
    ],
)
def test_a_table_is_named_after_its_file_without_shadowing(path: str, name: str) -> None:
    assert variable_name(path) == name


def test_names_of_two_files_with_one_stem_differ() -> None:
    assert variable_name("data/b/orders.csv", {"orders"}) == "orders_2"


def test_the_setup_cell_loads_the_first_tables_and_the_listing_names_them(tmp_path: Path) -> None:
    for i in range(MAX_TABLES + 2):
        (tmp_path / f"t{i}.csv").write_text("a,b\n1,2\n")
    (tmp_path / "notes.txt").write_text("not a table")
    (tmp_path / "u.tsv").write_text("a\tb\n1\t2\n")
    plan = plan_preload(tmp_path)
    assert plan is not None and len(plan.frames) == MAX_TABLES
    assert list(plan.frames) == ["t0", "t1", "t2", "t3", "t4"]
    assert "t0 = pd.read_csv('data/t0.csv')" in plan.code and "notes" not in plan.code
    listing = describe_data(tmp_path, plan)
    assert "loaded as the DataFrame `t0`" in listing
    assert "`t6`" not in listing  # beyond the first tables: listed, not loaded
    compile(plan.code, "<setup>", "exec")


def test_no_tables_no_setup(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    assert plan_preload(tmp_path) is None and plan_preload(None) is None
