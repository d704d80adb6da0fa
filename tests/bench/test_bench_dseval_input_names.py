"""DSEval input files found by the exact string the reference code spells."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from stateguard.bench.loaders.dseval import (
    input_paths_in_code,
    input_paths_in_text,
    load_dseval_session,
    load_dseval_suite,
    referenced_inputs,
    required_inputs,
    stage_inputs,
)

NAMES = [
    "All Countries and Economies.csv",
    "Global YouTube Statistics.csv",
    "DATA (1).csv",
    "O'Brien's sales.csv",
    "données été.csv",
    "nested folder/sub (2)/Année 2023.csv",
]


@pytest.mark.parametrize("name", NAMES)
def test_code_literals_are_read_whole(name: str) -> None:
    code = f"import pandas as pd\ndf = pd.read_csv({'inputs/' + name!r}, sep=',')\nprint('inputs')"
    assert input_paths_in_code(code) == [name]


def test_constant_path_expressions() -> None:
    code = (
        "import os\nfrom pathlib import Path\n"
        "a = os.path.join('inputs', 'a b.csv')\n"
        "b = Path('inputs') / 'sub dir' / 'c (1).csv'\n"
        "c = open('./inputs/d.txt')\n"
        "g = pd.read_csv('inputs/' + 'e f.csv')\n"
        "d = f'inputs/{name}.csv'\n"  # a template: not a file name
        "e = glob.glob('inputs/*.csv')\n"  # a glob: not a file name
    )
    assert input_paths_in_code(code) == ["a b.csv", "sub dir/c (1).csv", "d.txt", "e f.csv"]


def test_code_that_does_not_parse_is_read_for_quoted_literals() -> None:
    assert input_paths_in_code("df = pd.read_csv('inputs/x y.csv'\n") == ["x y.csv"]


def test_question_backticks_keep_spaces() -> None:
    text = "Read `inputs/Netflix Userbase.csv` and also inputs/other.csv."
    assert input_paths_in_text(text) == ["Netflix Userbase.csv", "other.csv"]
    assert referenced_inputs("", text) == ["Netflix Userbase.csv", "other.csv"]


def test_a_prose_mention_cut_at_a_space_is_not_required(tmp_path: Path) -> None:
    session = tmp_path / "s1.py"
    session.write_text(
        '# %%\n"""\nquestion: Read inputs/All Countries and Economies.csv into df.\n"""\n'
        "df = pd.read_csv('inputs/All Countries and Economies.csv')\n"
    )
    (tmp_path / "_inputs").mkdir()
    (tmp_path / "_inputs" / "All Countries and Economies.csv").write_text("a\n1\n")
    task = load_dseval_session(session)
    assert not task.skipped, task.skipped_reason
    assert required_inputs(task.turns[0].reference_code, task.turns[0].question) == [
        "All Countries and Economies.csv"
    ]


def _write_session(tmp_path: Path, name: str) -> Path:
    session = tmp_path / "s1.py"
    session.write_text(
        "# %%\nimport pandas as pd\n\n"
        f'# %%\n"""\nquestion: Read `inputs/{name}` into `df`.\n"""\n'
        f"df = pd.read_csv({'inputs/' + name!r})\n"
    )
    return session


@pytest.mark.parametrize("name", NAMES)
def test_session_loads_and_stages_names_with_any_characters(tmp_path: Path, name: str) -> None:
    session = _write_session(tmp_path, name)
    target = tmp_path / "_inputs" / "s1" / name
    target.parent.mkdir(parents=True)
    target.write_text("a\n1\n")
    task = load_dseval_session(session)
    assert not task.skipped, task.skipped_reason
    work = tmp_path / "work"
    work.mkdir()
    staged = stage_inputs(task, work)
    assert (staged / name).read_text() == "a\n1\n"


def test_missing_name_is_reported_whole(tmp_path: Path) -> None:
    task = load_dseval_session(_write_session(tmp_path, "All Countries and Economies.csv"))
    assert task.skipped
    assert "'All Countries and Economies.csv'" in task.skipped_reason


def test_other_unicode_normalization_is_found_and_staged_under_the_spelled_name(
    tmp_path: Path,
) -> None:
    spelled = unicodedata.normalize("NFC", "données été.csv")
    stored = unicodedata.normalize("NFD", spelled)
    assert spelled != stored
    folder = tmp_path / "_inputs" / "s1"
    folder.mkdir(parents=True)
    (folder / stored).write_text("a\n1\n")
    task = load_dseval_session(_write_session(tmp_path, spelled))
    assert not task.skipped and task.input_aliases == {spelled: stored}
    work = tmp_path / "work"
    work.mkdir()
    assert (stage_inputs(task, work) / spelled).read_text() == "a\n1\n"


def test_kaggle_dev_sessions_all_load_with_their_inputs() -> None:
    root = Path(__file__).resolve().parents[2].parent / "shared/benchmarks/dseval/kaggle-dev"
    if not root.is_dir():
        pytest.skip(f"shared benchmark data not found at {root}")
    tasks = load_dseval_suite(root)
    assert len(tasks) == 11
    assert [t.task_id for t in tasks if t.skipped] == []
    netflix = next(t for t in tasks if t.task_id == "dseval-netflix-userbase-dataset")
    spelled = [n for turn in netflix.turns for n in input_paths_in_code(turn.reference_code)]
    assert spelled == ["Netflix Userbase.csv"]
