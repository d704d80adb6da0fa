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
