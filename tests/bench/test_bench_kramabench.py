"""KramaBench: the workload loader, scoring by answer type, and the two commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.bench import runner
from stateguard.bench.judges.kramabench import APPROX_RTOL, judge_kramabench, normalize_answer
from stateguard.bench.judging import TurnJudge
from stateguard.bench.loaders import load_kramabench, load_suite
from stateguard.bench.loaders.kramabench import default_lake
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.cli.main import app
from stateguard.errors import TaskFormatError
from stateguard.llm import ScriptedModel

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kramabench_mini"


# ------------------------------------------------------------------ scoring
@pytest.mark.parametrize(
    ("answer_type", "gold", "prediction", "correct"),
    [
        ("numeric_exact", 4304379, "4304379", True),
        ("numeric_exact", 4304379, "The total is 4,304,379 acres.", True),
        ("numeric_exact", 3.3, "3.30", True),
        ("numeric_exact", 4304379, "4304380", False),
        ("numeric_exact", 2, [2], True),
        ("numeric_approximate", 0.1771, "0.177", True),
        ("numeric_approximate", 0.1771, "17.71%", True),
        ("numeric_approximate", 389.9, "396", False),
        ("numeric_approximate", 0, "0.0", True),
        ("string_exact", "August Complex", "august complex.", True),
        ("string_exact", "August Complex", '"August Complex"', True),
        ("string_exact", "August Complex", "Creek Fire", False),
        ("string_approximate", "Flagstaff Pulliam", "flagstaff  PULLIAM", True),
        ("string_approximate", "Flagstaff Pulliam", "Phoenix Sky Harbor", False),
        ("list_exact", ["CA", "NV"], "NV, CA", True),
        ("list_exact", ["CA", "NV"], '["nv", "ca"]', True),
        ("list_exact", [1141613, 4304379], "4,304,379\n1141613", True),
        ("list_exact", ["CA", "NV"], "CA", False),
        ("list_exact", ["CA", "NV"], "CA, NV, OR", False),
    ],
)
def test_answer_types(answer_type: str, gold: object, prediction: object, correct: bool) -> None:
    verdict = judge_kramabench(answer_type, gold, prediction)
    assert not verdict.excluded
    assert verdict.correct is correct
    assert (verdict.score == 1.0) is correct or answer_type != "list_exact"


def test_approximate_score_is_one_over_one_plus_the_relative_error() -> None:
    verdict = judge_kramabench("numeric_approximate", 400, "420")
    assert verdict.details["rae"] == pytest.approx(0.05)
    assert verdict.score == pytest.approx(1 / 1.05)
    assert not verdict.correct
    edge = judge_kramabench("numeric_approximate", 100, str(100 * (1 + APPROX_RTOL)))
    assert edge.correct


def test_list_score_is_the_f1_of_the_items() -> None:
    verdict = judge_kramabench("list_exact", ["a", "b", "c", "d"], "a, b, x")
    # precision 2/3, recall 2/4
    assert verdict.score == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert verdict.details["missing"] == ["c", "d"] and verdict.details["extra"] == ["x"]


@pytest.mark.parametrize(
    ("answer_type", "gold", "prediction"),
    [
        ("numeric_exact", 12, "Between 2019 and 2020 it rose from 10 to 12."),
        ("string_exact", "Nevada", "Nevada had the most acres per resident"),
        ("string_approximate", "Flagstaff Pulliam", "Flagstaff airport"),
        ("list_approximate", ["a"], "a"),
    ],
)
def test_what_the_rules_cannot_tell_is_undecided(
    answer_type: str, gold: object, prediction: str
) -> None:
    verdict = judge_kramabench(answer_type, gold, prediction)
    assert verdict.undecided and verdict.excluded and not verdict.correct


def test_no_answer_is_wrong_and_no_gold_is_excluded() -> None:
    assert not judge_kramabench("numeric_exact", 1, "  ").correct
    assert not judge_kramabench("numeric_exact", 1, "no idea").excluded
    verdict = judge_kramabench("list_exact", None, "a, b")
    assert verdict.excluded and not verdict.undecided


def test_normalization() -> None:
    assert normalize_answer("  “Café   Nero”. ") == "café nero"


# ------------------------------------------------------------------ loader
def _workload(root: Path, tasks: list[object]) -> Path:
    """A workload in KramaBench's layout: workload/wildfire.json, data/wildfire/input/."""
    lake = root / "data" / "wildfire" / "input"
    lake.mkdir(parents=True)
    (lake / "acres.csv").write_text(
        "State,Year,AcresBurned\nCA,2019,259823\nCA,2020,4304379\nNV,2020,978519\n"
        "OR,2020,1141613\n",
        encoding="utf-8",
    )
    (lake / "population.csv").write_text(
        "state,population\nCalifornia,39538223\nNevada,3104614\nOregon,4237256\n",
        encoding="utf-8",
    )
    (lake / "abbr.csv").write_text(
        "abbr,name\nCA,California\nNV,Nevada\nOR,Oregon\n", encoding="utf-8"
    )
    path = root / "workload" / "wildfire.json"
    path.parent.mkdir()
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def _task(tid: str, query: str, answer: object, kind: str, sources: list[str], subtasks=()):
    return {
        "id": tid,
        "query": query,
        "answer": answer,
        "answer_type": kind,
        "data_sources": sources,
        "subtasks": list(subtasks),
        "deepresearch_subset": False,  # other fields of the release are ignored
    }


TASKS = [
    _task("wildfire-easy-1", "How many acres burned in California in 2020?", 4304379,
          "numeric_exact", ["acres.csv"]),
    _task(
        "wildfire-hard-2",
        "Which state had the most acres burned per resident in 2020?",
        "Nevada",
        "string_exact",
        ["acres.csv", "population.csv", "abbr.csv"],
        subtasks=[
            _task("wildfire-hard-2-1", "Which states have 2020 data?", ["CA", "NV", "OR"],
                  "list_exact", ["acres.csv"]),
            _task("wildfire-hard-2-2", "How many acres burned per resident in Nevada in 2020?",
                  0.3152, "numeric_approximate", ["acres.csv", "population.csv"]),
        ],
    ),
    _task("wildfire-easy-3", "Which state has the abbreviation OR?", "Oregon",
          "string_approximate", ["abbr.csv"]),
    _task("wildfire-easy-4", "How many fires were there?", 3, "numeric_exact",
          ["fire_counts.csv"]),
    {"id": "wildfire-bad-5", "answer": 1},
]  # fmt: skip


def test_loader_turns_dependencies_lake_and_rejections(tmp_path: Path) -> None:
    workload = _workload(tmp_path, TASKS)
    loaded = load_suite("kramabench", workload)
    tasks = {t.task_id: t for t in loaded.tasks}
    assert list(tasks) == ["wildfire-easy-1", "wildfire-hard-2", "wildfire-easy-3",
                           "wildfire-easy-4"]  # fmt: skip
    hard = tasks["wildfire-hard-2"]
    assert hard.suite == "kramabench" and hard.domain == "wildfire"
    assert hard.data_dir == (tmp_path / "data" / "wildfire" / "input").resolve()
    assert [t.meta["id"] for t in hard.turns] == [
        "wildfire-hard-2-1",
        "wildfire-hard-2-2",
        "wildfire-hard-2",
    ]
    assert [t.depends_on for t in hard.turns] == [(), (), (1, 2)]
    assert hard.turns[1].gold == 0.3152
    assert hard.turns[1].meta["answer_type"] == "numeric_approximate"
    assert "fire_counts.csv" in (tasks["wildfire-easy-4"].skipped_reason or "")
    assert tasks["wildfire-easy-1"].skipped_reason is None
    [bad] = loaded.rejected
    assert bad.task_id == "wildfire-bad-5"
    assert "tasks[4].query" in bad.reason and str(workload) in bad.reason


def test_nested_subtasks_depend_on_their_own_subtree(tmp_path: Path) -> None:
    leaf = _task("d-1-1-1", "leaf", 1, "numeric_exact", [])
    mid = _task("d-1-1", "mid", 2, "numeric_exact", [], subtasks=[leaf])
    side = _task("d-1-2", "side", 3, "numeric_exact", [])
    top = _task("d-1", "top", 4, "numeric_exact", [], subtasks=[mid, side])
    workload = _workload(tmp_path, [top])
    [task] = load_kramabench(workload).tasks
    assert [t.question for t in task.turns] == ["leaf", "mid", "side", "top"]
    assert [t.depends_on for t in task.turns] == [(), (1,), (), (1, 2, 3)]


def test_lake_given_found_beside_or_missing(tmp_path: Path) -> None:
    workload = _workload(tmp_path, TASKS[:1])
    other = tmp_path / "elsewhere"
    other.mkdir()
    [task] = load_kramabench(workload, other).tasks
    assert task.data_dir == other.resolve()
    assert "acres.csv" in (task.skipped_reason or "")
    assert default_lake(EXAMPLE / "workload.json") == EXAMPLE / "lake"
    lone = tmp_path / "lone.json"
    lone.write_text("[]", encoding="utf-8")
    with pytest.raises(TaskFormatError, match="--lake"):
        load_kramabench(lone)
    with pytest.raises(TaskFormatError, match="not a folder"):
        load_kramabench(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(TaskFormatError, match="cannot read the workload"):
        load_kramabench(broken, other)


def test_the_shipped_example_loads() -> None:
    loaded = load_kramabench(EXAMPLE / "workload.json")
    assert len(loaded.tasks) == 8 and not loaded.rejected
    assert all(t.skipped_reason is None for t in loaded.tasks)
    env2 = next(t for t in loaded.tasks if t.task_id == "env-2")
    assert len(env2.turns) == 3 and env2.turns[-1].gold == "Nevada"


# ------------------------------------------------------------------ commands
def test_discover_eval_prints_recall_at_5_and_10() -> None:
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "discover-eval",
            str(EXAMPLE / "workload.json"),
            "--lake",
            str(EXAMPLE / "lake"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tasks"] == 8
    assert 0.0 <= data["recall_at_5"] <= data["recall_at_10"] <= 1.0
    assert data["recall_at_10"] == 1.0


def _code(body: str) -> str:
    return f"I will compute it.\n```python\nimport pandas as pd\n{body}\n```"


# One scripted worker model per task that runs (in run order, jobs=1), one reply per
# call: per turn the code, then the answer to what it printed. The code reads the lake
# as the kernel sees it (data/); later turns of a task reuse what earlier ones made.
_SCRIPTS = [
    [
        _code("a = pd.read_csv('data/acres.csv')\n"
              "print(a[(a.State == 'CA') & (a.Year == 2020)].AcresBurned.sum())"),
        "<answer>4304379</answer>",
    ],
    [
        _code("a = pd.read_csv('data/acres.csv')\n"
              "print(', '.join(sorted(a[a.Year == 2020].State)))"),
        "<answer>CA, NV, OR</answer>",
        _code("p = pd.read_csv('data/population.csv')\n"
              "print(round(978519 / p.set_index('state').population['Nevada'], 4))"),
        "<answer>0.3152</answer>",
        _code("n = pd.read_csv('data/abbr.csv').set_index('abbr').name\n"
              "y = a[a.Year == 2020].assign(state=lambda d: d.State.map(n)).merge(p, on='state')\n"
              "print(y.loc[(y.AcresBurned / y.population).idxmax(), 'state'])"),
        "<answer>Nevada</answer>",
    ],
    [
        _code("print(pd.read_csv('data/abbr.csv').set_index('abbr').name['OR'])"),
        "<answer>Oregon State</answer>",
    ],
]  # fmt: skip


@pytest.mark.kernel
def test_bench_run_kramabench_with_a_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workload = _workload(tmp_path, TASKS)
    models = iter([ScriptedModel(replies) for replies in _SCRIPTS])
    monkeypatch.setattr(runner, "_chat_model", lambda config: next(models))
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "bench", "run", "--suite", "kramabench", "--path", str(workload),
            "--lake", str(tmp_path / "data" / "wildfire" / "input"), "--out", str(out),
            "--worker", "llm", "--max-steps", "3",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert next(models, None) is None  # every task that runs asked for its model
    turns = {
        (r["task_id"], r["turn_id"]): r
        for r in map(json.loads, (out / "turns.jsonl").read_text().splitlines())
    }
    assert turns[("wildfire-easy-1", 1)]["correct"] is True
    assert [turns[("wildfire-hard-2", i)]["correct"] for i in (1, 2, 3)] == [True, True, True]
    assert turns[("wildfire-hard-2", 3)]["depends_on"] == [1, 2]
    # "Oregon State" vs "Oregon": partial overlap, left to an LLM judge
    assert turns[("wildfire-easy-3", 1)]["correct"] is None
    assert turns[("wildfire-easy-4", 1)]["skipped"] is True
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tasks_rejected"] == 1
    assert metrics["turns_undecided"] == 1


def test_hybrid_judge_decides_undecided_turns_and_leaves_steps_without_gold() -> None:
    [task] = [t for t in load_kramabench(EXAMPLE / "workload.json").tasks if t.task_id == "env-2"]
    model = ScriptedModel(["<score>1</score>"])
    config = RunConfig(suite="kramabench", path=str(EXAMPLE / "workload.json"), judge="hybrid")
    judge = TurnJudge(config, model_factory=lambda _: model)

    def payload(turn_id: int, answer: str) -> dict:
        verdict = judge_kramabench(
            task.turns[turn_id - 1].meta["answer_type"], task.turns[turn_id - 1].gold, answer
        )
        return TurnResult(
            task_id=task.task_id,
            turn_id=turn_id,
            n_turns=3,
            correct=None if verdict.excluded else verdict.correct,
            answer=answer,
        ).model_dump()

    step = TurnResult.model_validate(judge.apply(task, payload(1, "CA 4304379")))
    assert step.correct is None and not step.undecided and step.judged_by is None
    assert model.requests == []  # no gold: nothing to judge against
    final = TurnResult.model_validate(judge.apply(task, payload(3, "It is Nevada")))
    assert final.correct is True and final.judged_by == "llm"
    assert len(model.requests) == 1
