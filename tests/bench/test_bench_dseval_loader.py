"""DSEval loader on the real shared sessions and on malformed sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from stateguard.bench.loaders.dseval import (
    load_dseval_session,
    load_dseval_suite,
    referenced_inputs,
    resolve_inputs_dir,
    split_cells,
    stage_inputs,
)
from stateguard.errors import TaskFormatError


@pytest.fixture(scope="module")
def suite(dseval_root: Path):
    return {t.task_id: t for t in load_dseval_suite(dseval_root)}


def test_all_sessions_load(suite) -> None:
    assert len(suite) == 21
    assert all(t.suite == "dseval" for t in suite.values())


def test_baby_names_is_skipped_with_missing_file(suite) -> None:
    skipped = {tid: t.skipped_reason for tid, t in suite.items() if t.skipped}
    assert list(skipped) == ["dseval-06-stats-us-baby-names"]
    assert "US_Baby_Names_right.csv" in skipped["dseval-06-stats-us-baby-names"]


def test_cell_counts_are_plausible(suite, dseval_root: Path) -> None:
    for task in suite.values():
        source = (dseval_root / f"{task.task_id.removeprefix('dseval-')}.py").read_text()
        docstring_cells = sum(1 for c in split_cells(source) if c.startswith('"""'))
        assert len(task.turns) == docstring_cells
        assert 4 <= len(task.turns) <= 16
    assert len(suite["dseval-01-getting-knowing-your-data-chipotle"].turns) == 15
    assert sum(len(t.turns) for t in suite.values()) == 187


def test_turn_contents(suite, dseval_root: Path) -> None:
    chipo = suite["dseval-01-getting-knowing-your-data-chipotle"]
    first = chipo.turns[0]
    assert first.question.startswith("Import the dataset from `inputs/chipotle.tsv`")
    assert first.meta["setup_code"] == "import pandas as pd\nimport numpy as np"
    assert first.context == first.meta["setup_code"]
    assert first.validator["namespace_check"] == {"chipo": {}}
    assert set(first.validator) == {"crash", "namespace_intact", "result", "namespace_check"}
    assert first.gold is None and first.depends_on == ()
    assert chipo.turns[4].validator["result"] == {"value_only": True}  # compare_fn: flattened
    assert chipo.turns[1].context == "" and "setup_code" not in chipo.turns[1].meta
    assert chipo.data_dir == dseval_root / "_inputs"
    assert chipo.domain == "getting-knowing-your-data"

    wind = suite["dseval-06-stats-wind-stats"]
    assert wind.turns[0].validator["namespace_check"] == {"data": {"value_only": True}}
    assert wind.turns[9].validator["result"] == {"ignore_index": True}
    iris = suite["dseval-10-deleting-iris"]
    pop = next(t for t in iris.turns if t.reference_code == 'iris.pop("class")')
    assert "result" not in pop.validator  # template: intact drops the result check
    regiment = suite["dseval-03-grouping-regiment"]
    assert "stream" in regiment.turns[-1].validator
    apple = suite["dseval-09-time-series-apple-stock"]
    assert apple.turns[0].meta["execution"] == {"max_time": 5}


def test_resolve_inputs_dir_prefers_session_folder(tmp_path: Path) -> None:
    session = tmp_path / "s1.py"
    (tmp_path / "_inputs").mkdir()
    assert resolve_inputs_dir(session) == tmp_path / "_inputs"
    (tmp_path / "_inputs" / "s1").mkdir()
    assert resolve_inputs_dir(session) == tmp_path / "_inputs" / "s1"


def test_referenced_inputs() -> None:
    code = "a = pd.read_csv('inputs/a.csv')\nb = 'inputs/{}-x.csv'.format(s)"
    assert referenced_inputs(code, "see [here](inputs/q.data).", {"d.csv": "url"}) == [
        "d.csv",
        "q.data",
        "a.csv",
    ]


SESSION = '''# %%
import pandas as pd

# %%
"""
question: Load it.
validator:
  namespace_check:
    df:
"""
df = pd.read_csv("inputs/t.csv")

# %%
x = 1

# %%
"""
question: Mean?
"""
df.a.mean() + x
'''


def _session(tmp_path: Path, text: str, with_input: bool = True) -> Path:
    path = tmp_path / "s1.py"
    path.write_text(text)
    (tmp_path / "_inputs").mkdir(exist_ok=True)
    if with_input:
        (tmp_path / "_inputs" / "t.csv").write_text("a\n1\n3\n")
    return path


def test_context_cells_attach_to_next_turn_and_stage(tmp_path: Path) -> None:
    task = load_dseval_session(_session(tmp_path, SESSION))
    assert task.task_id == "dseval-s1" and task.domain is None and not task.skipped
    assert [t.meta["cell_index"] for t in task.turns] == [1, 3]
    assert task.turns[1].meta["setup_code"] == "x = 1"
    work = tmp_path / "work"
    work.mkdir()
    staged = stage_inputs(task, work)
    assert staged == work / "inputs" and (staged / "t.csv").read_text() == "a\n1\n3\n"
    assert not staged.is_symlink()


def test_missing_input_skips(tmp_path: Path) -> None:
    task = load_dseval_session(_session(tmp_path, SESSION, with_input=False))
    assert task.skipped and "t.csv" in task.skipped_reason


def _cell(yaml_text: str, code: str = "x") -> str:
    return f'# %%\n"""\n{yaml_text}"""\n{code}\n'


MALFORMED = [
    ("bad_yaml", _cell("question: [unclosed\n"), "cell 0: invalid YAML"),
    ("yaml_not_mapping", _cell("- a\n"), "must be a mapping"),
    ("question_not_text", _cell("question: [1, 2]\n"), "'question'"),
    ("unknown_key", _cell("question: q\nanswer: 3\n"), "unknown docstring keys ['answer']"),
    ("unknown_execution", _cell("question: q\nexecution:\n  gpu: 1\n"), "execution keys ['gpu']"),
    # docstring cells without a question, or without code, are context (as in DSEval)
    ("no_question", _cell("validator:\n  result:\n", "x = 1"), "no question cells"),
    ("no_code", '# %%\n"""\nquestion: q\n"""\n', "no question cells"),
    (
        "unknown_validator",
        _cell("question: q\nvalidator:\n  fuzzy:\n"),
        "unknown validator 'fuzzy'",
    ),
    ("model_no_config", _cell("question: q\nvalidator:\n  model:\n"), "validator.model.model_name"),
    (
        "model_bad_metric",
        _cell("question: q\nvalidator:\n  model: [m, X, y, auc]\n"),
        "validator.model.metric_type: unknown metric(s) ['auc']",
    ),
    (
        "model_tolerance_length",
        _cell("question: q\nvalidator:\n  model: [m, X, y, [mse, r2], [0.1]]\n"),
        "validator.model.tolerance",
    ),
    (
        "table_no_cases",
        _cell("question: q\nvalidator:\n  table_test:\n    function_name: f\n"),
        "validator.table_test.test_cases",
    ),
    (
        "table_repeat_first",
        _cell("question: q\nvalidator:\n  table_test: [f, ['//']]\n"),
        "test_cases[0]",
    ),
    (
        "table_bad_validator",
        _cell("question: q\nvalidator:\n  table_test: [f, [[1]], 'def g(): 0']\n"),
        "input_validator",
    ),
    (
        "unknown_option",
        _cell("question: q\nvalidator:\n  result:\n    fuzzy: true\n"),
        "validator.result: unknown comparison options ['fuzzy']",
    ),
    (
        "nested_unknown_option",
        _cell(
            "question: q\nvalidator:\n  or:\n    namespace_check:\n      df:\n        exact: 1\n"
        ),
        "validator.or.namespace_check.df: unknown comparison options ['exact']",
    ),
    (
        "option_not_bool",
        _cell("question: q\nvalidator:\n  result:\n    ignore_order: maybe\n"),
        "validator.result.ignore_order",
    ),
    (
        "code_without_compare_fn",
        _cell('question: q\nvalidator:\n  result:\n    compare_fn: "def f(): 0"\n'),
        "compare_fn",
    ),
    (
        "replacement_and_treat_as_update",
        _cell(
            "question: q\nvalidator:\n  namespace_intact:\n    replacement: [a]\n"
            "    treat_replacement_as_update: true\n"
        ),
        "validator.namespace_intact",
    ),
    ("crash_with_options", _cell("question: q\nvalidator:\n  crash: 3\n"), "validator.crash"),
    (
        "bad_template",
        _cell("question: q\nvalidator:\n  template: strict\n"),
        "validator.template",
    ),
    ("no_questions", "# %%\nx = 1\n", "no question cells"),
]


@pytest.mark.parametrize(
    ("text", "needle"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_session(tmp_path: Path, text: str, needle: str) -> None:
    path = _session(tmp_path, text)
    with pytest.raises(TaskFormatError) as info:
        load_dseval_session(path)
    assert str(path) in str(info.value) and needle in str(info.value)


def test_missing_manifest(tmp_path: Path) -> None:
    _session(tmp_path, SESSION)
    with pytest.raises(TaskFormatError, match=r"_manifest\.yaml"):
        load_dseval_suite(tmp_path)
    (tmp_path / "_manifest.yaml").write_text("name: X\nversion: 1\n")
    assert [t.task_id for t in load_dseval_suite(tmp_path)] == ["dseval-s1"]


def test_context_docstring_cells(tmp_path: Path) -> None:
    text = (
        '# %%\n"""\ndata:\n  t.csv: https://example.invalid/t.csv\n"""\nimport pandas as pd\n'
        + _cell("question: q\n", "1 + 1")
    )
    task = load_dseval_session(_session(tmp_path, text))
    assert len(task.turns) == 1 and task.turns[0].meta["setup_code"] == "import pandas as pd"


def test_one_malformed_session_is_rejected_not_fatal(tmp_path: Path) -> None:
    from stateguard.bench.loaders.dseval import scan_dseval_suite

    _session(tmp_path, SESSION)
    (tmp_path / "s2.py").write_text(_cell("question: q\nvalidator:\n  fuzzy:\n"))
    (tmp_path / "_manifest.yaml").write_text("name: X\nversion: 1\n")
    loaded = scan_dseval_suite(tmp_path)
    assert [t.task_id for t in loaded.tasks] == ["dseval-s1"]
    (rejection,) = loaded.rejected
    assert rejection.task_id == "dseval-s2" and rejection.source.endswith("s2.py")
    assert "cell 0" in rejection.reason and "fuzzy" in rejection.reason
    with pytest.raises(TaskFormatError, match="fuzzy"):
        load_dseval_suite(tmp_path)
