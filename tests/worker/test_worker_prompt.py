"""The worker's system prompt names the directory its listing's paths start with."""

from __future__ import annotations

from stateguard.worker.loop import load_example, system_prompt

LISTING = "Files:\n- inputs/chipotle.tsv (364.0 KB)"


def test_a_benchmark_inputs_copy_is_named_as_it_is_and_loaded_in_the_example() -> None:
    prompt = system_prompt(LISTING, 10, data_dir="inputs")
    assert "directory `inputs/`" in prompt and "directory `data/`" not in prompt
    assert "STATEGUARD_DATA_DIR" not in prompt  # no read-only mount for a copy
    assert 'pd.read_csv("inputs/chipotle.tsv", sep="\\t")' in prompt
    assert "$data_place" not in prompt and "$data_files" not in prompt


def test_the_session_data_directory_stays_the_default() -> None:
    prompt = system_prompt("Files:\n- data/sales.csv (1.0 KB)", 10)
    assert "directory `data/`" in prompt and "STATEGUARD_DATA_DIR" in prompt
    assert 'sales = pd.read_csv("data/sales.csv")' in prompt
    # no table listed: a placeholder path under data/
    assert "data/table.csv" in load_example("Files:\n- data/notes.txt (1.0 KB)")


def _columns_in_examples(prompt: str) -> set[str]:
    """Every column name the prompt's code examples index a frame with."""
    import re

    return set(re.findall(r"\w+\[\"(\w+)\"\]", prompt))


def test_no_prompt_example_names_a_column_the_data_lacks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from stateguard.worker.preload import plan_preload
    from stateguard.worker.run import describe_data

    (tmp_path / "rooms.csv").write_text(
        "room_id,night,nights_booked,nightly_rate,city\n1,2025-01-01,3,99.5,Oslo\n"
    )
    setup = plan_preload(tmp_path)
    assert setup is not None
    prompt = system_prompt(
        describe_data(tmp_path, setup),
        10,
        example=setup.example,
        column_example=setup.column_example,
    )
    named = _columns_in_examples(prompt)
    # built from the task's own frame and numeric columns (the id column left out)
    assert (
        'rooms["nights_booked_x_nightly_rate"] = rooms["nights_booked"] * rooms["nightly_rate"]'
        in prompt
    )
    assert named <= {"nights_booked", "nightly_rate", "nights_booked_x_nightly_rate"}
    for foreign in ("revenue", "price", "qty"):
        assert foreign not in prompt


def test_without_two_numeric_columns_the_prompt_has_no_column_example(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from stateguard.worker.preload import plan_preload

    (tmp_path / "notes.csv").write_text("author,text\nann,hello\n")
    setup = plan_preload(tmp_path)
    assert setup is not None and setup.column_example == ""
    prompt = system_prompt("Files:\n- data/notes.csv (1.0 KB)", 10, column_example="")
    assert _columns_in_examples(prompt) == set() and "$column_example" not in prompt


def test_the_examples_look_at_the_largest_table_not_the_first_listed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from stateguard.worker.preload import plan_preload

    # a small lookup table listed first (by name), the facts in a larger file
    (tmp_path / "courses.csv").write_text("code,dept,hours,cap\nA,Bio,3,40\nB,Chem,4,30\n")
    rows = "".join(f"E{i},S{i % 7},A,{3 + i % 2},{100 + i}\n" for i in range(50))
    (tmp_path / "enrolments.csv").write_text("eid,sid,code,credits,fee\n" + rows)
    setup = plan_preload(tmp_path)
    assert setup is not None
    assert list(setup.frames) == ["courses", "enrolments"]  # the listing keeps its order
    assert setup.example == "  enrolments.head()"
    assert setup.column_example.startswith(', for example `enrolments["credits_x_fee"]')
    # near miss: equal sizes keep the listing's order
    (tmp_path / "courses.csv").write_text("a,b\n1,2\n")
    (tmp_path / "enrolments.csv").write_text("a,b\n1,2\n")
    same = plan_preload(tmp_path)
    assert same is not None and same.example == "  courses.head()"
