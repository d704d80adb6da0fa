"""The LongDS release layout end to end: loader entry points, replay runs, rejections, judges.

The fixture (`fixtures/longds_release/dataset/`) follows the release layout: a task list,
two tasks in two domains, reference code with dependency comments in several surface
forms, data in the parallel ``data/longds`` tree, and answers that are not objects.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.bench.loaders import load_suite, scan_longds
from stateguard.bench.records import RunConfig, RunStore
from stateguard.bench.report import write_metrics
from stateguard.bench.runner import run_benchmark
from stateguard.cli.main import app

DATASET = Path(__file__).parent / "fixtures" / "longds_release" / "dataset"
RELEASE = DATASET / "task" / "longds"
HEALTH = "health/clinic_visits/task2"
RETAIL = "retail/stationery_sales/task1"
DEPS = {
    HEALTH: [[], [1], [2], [1, 3], [2, 3, 4], [2]],
    RETAIL: [[], [1], [1, 2], [3], [3, 4]],
}


@pytest.mark.parametrize(
    ("path", "ids"),
    [
        (DATASET, [HEALTH, RETAIL]),  # task_list order, not path order
        (RELEASE, [HEALTH, RETAIL]),
        (DATASET / "task", [HEALTH, RETAIL]),
        (RELEASE / "retail", [RETAIL]),
        (RELEASE / "health" / "clinic_visits", [HEALTH]),
        (RELEASE / HEALTH, [HEALTH]),
    ],
)
def test_every_entry_point_finds_the_tasks(path: Path, ids: list[str]) -> None:
    loaded = scan_longds(path)
    assert [t.task_id for t in loaded.tasks] == ids and not loaded.rejected
    for task in loaded.tasks:
        domain, dataset, name = task.task_id.split("/")
        assert task.domain == domain
        assert task.data_dir == (DATASET / "data" / "longds" / domain / dataset / name / "data")
        assert [list(t.depends_on) for t in task.turns] == DEPS[task.task_id]


def test_answers_are_any_json_value() -> None:
    (health,) = scan_longds(RELEASE / HEALTH).tasks
    assert [t.gold for t in health.turns] == [{"n_patients": 4}, 41.5, True, "B", 12, ["B", "C"]]


def test_start_index_task_limit_turn_limit() -> None:
    loaded = load_suite("longds", DATASET, start_index=1, task_limit=5, turn_limit=2)
    assert [t.task_id for t in loaded.tasks] == [RETAIL]
    assert len(loaded.tasks[0].turns) == 2
    assert [t.task_id for t in load_suite("longds", DATASET, task_limit=1).tasks] == [HEALTH]


def test_path_map_rewrites_absolute_paths(tmp_path: Path) -> None:
    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    task_json = copy / "task" / "longds" / HEALTH / "task.json"
    turns = json.loads(task_json.read_text())
    turns[0]["code"] = turns[0]["code"].replace(
        '"data/visits.csv"', '"/data/longds/health/clinic_visits/task2/data/visits.csv"'
    )
    task_json.write_text(json.dumps(turns))
    maps = ["/data/longds/{domain}/{dataset}/{task}/data=data"]
    (task,) = load_suite("longds", copy / "task" / "longds" / HEALTH, path_maps=maps).tasks
    assert 'pd.read_csv("data/visits.csv")' in task.turns[0].reference_code


def _broken_copy(tmp_path: Path) -> Path:
    """The fixture plus a task with a malformed turn and a listed task that is absent."""
    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    release = copy / "task" / "longds"
    bad = release / "retail" / "stationery_sales" / "task7"
    bad.mkdir()
    (bad / "task.json").write_text(json.dumps([{"turn_id": 1, "question": "q?", "code": "1"}]))
    listed = json.loads((release / "task_list.json").read_text())
    listed += [
        {"task_domain": "retail", "dataset_name": "stationery_sales", "task_id": "task7"},
        {"task_domain": "health", "dataset_name": "clinic_visits", "task_id": "task9"},
    ]
    (release / "task_list.json").write_text(json.dumps(listed))
    return copy


def test_broken_tasks_are_rejected_with_reasons(tmp_path: Path) -> None:
    loaded = scan_longds(_broken_copy(tmp_path))
    assert [t.task_id for t in loaded.tasks] == [HEALTH, RETAIL]
    reasons = {r.task_id: r.reason for r in loaded.rejected}
    assert set(reasons) == {"retail/stationery_sales/task7", "health/clinic_visits/task9"}
    assert (
        "task.json: turn #0: field 'answer' is required" in reasons["retail/stationery_sales/task7"]
    )
    assert "file not found" in reasons["health/clinic_visits/task9"]


@pytest.mark.kernel
def test_replay_on_the_release_root_scores_every_turn(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "run",
            "--suite",
            "longds",
            "--path",
            str(DATASET),
            "--worker",
            "replay",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    turns = RunStore(out).results()
    assert len(turns) == 11 and all(t.correct is True for t in turns)
    assert {t.task_id: [] for t in turns}.keys() == DEPS.keys()
    for t in turns:
        assert list(t.depends_on) == DEPS[t.task_id][t.turn_id - 1]
        assert t.domain == t.task_id.split("/")[0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["per_domain"]["health"]["turns_scored"] == 6
    assert metrics["per_domain"]["retail"]["turns_scored"] == 5
    assert metrics["per_domain"]["retail"]["turn_accuracy"] == 1.0
    assert metrics["tasks_rejected"] == 0 and metrics["turns_undecided"] == 0


@pytest.mark.kernel
def test_a_broken_task_does_not_lose_the_run_and_strict_fails(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path)
    out = tmp_path / "run"
    args = ["bench", "run", "--suite", "longds", "--path", str(path), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "rejected" in result.output and "task7" in result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tasks_rejected"] == 2 and metrics["turns_scored"] == 11
    assert {r["task_id"] for r in metrics["rejections"]} == {
        "retail/stationery_sales/task7",
        "health/clinic_visits/task9",
    }
    strict = CliRunner().invoke(app, [*args, "--strict"])
    assert strict.exit_code == 1, strict.output


def _scripted(tmp_path: Path, replies: list[str]) -> dict[str, str]:
    script = tmp_path / "judge.json"
    script.write_text(json.dumps(replies))
    return {"backend": "scripted", "script_path": str(script)}


@pytest.mark.kernel
def test_llm_judge_scores_every_answer(tmp_path: Path) -> None:
    replies = ["<score>1</score>"] * 5 + ["no score"] * 4 + ["<score>0</score>"] * 2
    config = RunConfig(
        suite="longds",
        path=str(RELEASE / HEALTH),
        judge="llm",
        judge_llm_overrides=_scripted(tmp_path, replies),
    )
    out = tmp_path / "run"
    run_benchmark(config, out)
    turns = sorted(RunStore(out).results(), key=lambda r: r.turn_id)
    assert all(t.judged_by == "llm" for t in turns)
    assert [t.correct for t in turns] == [True, True, True, True, True, None]
    metrics = write_metrics(out)
    assert metrics["turns_llm_judged"] == 6 and metrics["judge_unparseable"] == 1


@pytest.mark.kernel
def test_hybrid_judge_only_decides_undecided_turns(tmp_path: Path) -> None:
    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    task_json = copy / "task" / "longds" / RETAIL / "task.json"
    turns = json.loads(task_json.read_text())
    turns[1]["code"] += '\nprint(f"Revenue grew from 150 to {sales.revenue.sum()}")'
    turns[1]["code"] = turns[1]["code"].replace('float(sales["revenue"].sum())', "None")
    task_json.write_text(json.dumps(turns))
    out = tmp_path / "run"
    base = {"suite": "longds", "path": str(copy / "task" / "longds" / RETAIL)}
    run_benchmark(RunConfig(**base), out)
    t2 = next(t for t in RunStore(out).results() if t.turn_id == 2)
    assert t2.undecided and t2.correct is None  # prose with two numbers: not wrong
    hybrid = RunConfig(
        **base, judge="hybrid", judge_llm_overrides=_scripted(tmp_path, ["<score>1</score>"])
    )
    run_benchmark(hybrid, tmp_path / "hybrid")
    results = {t.turn_id: t for t in RunStore(tmp_path / "hybrid").results()}
    assert results[2].correct is True and results[2].judged_by == "llm"
    assert all(results[i].judged_by is None and results[i].correct for i in (1, 3, 4, 5))


@pytest.mark.kernel
def test_report_rejudges_undecided_turns_of_a_finished_run(tmp_path: Path) -> None:
    from stateguard.bench.judging import rejudge_run

    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    task_json = copy / "task" / "longds" / RETAIL / "task.json"
    turns = json.loads(task_json.read_text())
    turns[1]["code"] = 'sales["revenue"] = sales["units"] * sales["unit_price"]\n'
    turns[1]["code"] += 'print(f"Revenue grew from 150 to {sales.revenue.sum()}")'
    task_json.write_text(json.dumps(turns))
    out = tmp_path / "run"
    run_benchmark(RunConfig(suite="longds", path=str(copy / "task" / "longds" / RETAIL)), out)
    assert write_metrics(out)["turns_undecided"] == 1
    counts = rejudge_run(
        out, "hybrid", judge_llm_overrides=_scripted(tmp_path, ["<score>1</score>"])
    )
    assert counts == {"judged": 1, "unparseable": 0}
    metrics = write_metrics(out)
    assert metrics["turns_undecided"] == 0 and metrics["turns_llm_judged"] == 1
    assert metrics["turn_accuracy"] == 1.0 and len(RunStore(out).results()) == 5
    result = CliRunner().invoke(app, ["bench", "report", str(out), "--judge", "exact"])
    assert result.exit_code != 0


@pytest.mark.kernel
def test_native_agent_on_a_release_task_writes_its_trajectory(tmp_path: Path) -> None:
    from stateguard.bench.events import Event
    from stateguard.bench.llm_run import run_llm_task
    from stateguard.llm import ScriptedModel

    (task,) = scan_longds(RELEASE / HEALTH, turn_limit=1).tasks
    config = RunConfig(suite="longds", path=str(RELEASE / HEALTH), worker="llm")
    events: list[Event] = []
    code = "import pandas as pd\nprint(len(pd.read_csv('data/visits.csv')))"

    def reply(messages) -> str:
        if any(m.role == "assistant" for m in messages):
            return "<answer>There are 4 patients.</answer>"
        return f"Counting.\n```python\n{code}\n```"

    model = ScriptedModel(reply)
    run_llm_task(task, config, tmp_path, set(), events.append, model)
    (turn,) = [e.payload for e in events if e.kind == "turn"]
    assert turn["correct"] is True, turn  # prose against single-field gold {"n_patients": 4}
    assert (tmp_path / "trajectories" / f"{HEALTH}.jsonl").is_file()
