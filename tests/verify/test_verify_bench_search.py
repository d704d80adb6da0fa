"""``bench run --worker llm --search ...``: the search in the benchmark, with scripted models."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stateguard.bench.loaders import load_longds_task, load_suite
from stateguard.bench.records import RunConfig, RunStore, TurnResult
from stateguard.bench.runner import Event, run_benchmark
from stateguard.bench.search_run import run_search_task, task_branches
from stateguard.cli.main import app
from stateguard.cli.verify import trajectory_steps
from stateguard.errors import StateguardError
from stateguard.llm import ScriptedModel
from stateguard.verify.search import Proposal

pytestmark = pytest.mark.kernel

TOY = Path(__file__).resolve().parents[1] / "bench" / "fixtures" / "longds_toy"
F = "```"
GOOD = (
    "import pandas as pd, json\nsales = pd.read_csv('data/sales.csv')\n"
    "sales['revenue'] = sales['units'] * sales['unit_price']\n"
    "answer = {'n_orders': int(len(sales)), "
    "'total_revenue': round(float(sales['revenue'].sum()), 2)}\nprint(json.dumps(answer))"
)
# a rollout whose answer states numbers no execution showed: the verifier scores it 0
MADE_UP = [
    f"Count rows.\n{F}python\nimport pandas as pd\nprint('loaded')\n{F}",
    '<answer>{"n_orders": 99, "total_revenue": 1000.0}</answer>',
]
RIGHT = [
    f"Compute both.\n{F}python\n{GOOD}\n{F}",
    '<answer>{"n_orders": 12, "total_revenue": 164.5}</answer>',
]


def _task():
    task = load_longds_task(TOY)
    return task.model_copy(update={"turns": task.turns[:1]})


def _config(**kw) -> RunConfig:
    return RunConfig(
        suite="longds",
        path=str(TOY),
        worker="llm",
        search="best-of-n",
        search_n=2,
        turn_limit=1,
        max_steps_per_turn=3,
        **kw,
    )


def test_best_of_n_in_the_bench_picks_the_supported_rollout(tmp_path: Path) -> None:
    policy = ScriptedModel([*MADE_UP, *RIGHT], name="policy")
    events: list[Event] = []
    run_search_task(_task(), _config(), tmp_path, set(), events.append, policy)
    (result,) = [TurnResult.model_validate(e.payload) for e in events if e.kind == "turn"]
    assert result.correct is True and result.attempts == 2
    assert result.worker_llm_calls == 4 and result.llm_calls == 0 and policy.remaining == 0
    (log,) = [
        json.loads(x) for x in (tmp_path / "search" / "longds_toy.jsonl").read_text().splitlines()
    ]
    assert [c["score"] for c in log["candidates"]] == [0.0, 1.0] and log["best"] == 1
    made_up = log["candidates"][0]["verdicts"][1]
    assert made_up["score"] == 0.0 and made_up["layer"] == "deterministic"
    ((task, steps),) = trajectory_steps(tmp_path / "trajectories" / "longds_toy.jsonl")
    assert task.question.startswith("How many orders")
    assert steps[0].code == GOOD and steps[-1].final and "164.5" in (steps[-1].answer or "")
    assert not (tmp_path / "work" / "longds_toy-search").exists()


def test_hybrid_verifier_uses_its_own_model(tmp_path: Path) -> None:
    policy = ScriptedModel([*MADE_UP, *RIGHT], name="policy")
    # the rules decide the made-up answer (0); the LLM layer judges the rest: 3 steps
    judge = ScriptedModel(["<score>1</score><summary>ok</summary>"] * 3, name="verifier")
    events: list[Event] = []
    run_search_task(
        _task(),
        _config(verifier="hybrid"),
        tmp_path,
        set(),
        events.append,
        policy,
        verifier_model=judge,
    )
    (result,) = [TurnResult.model_validate(e.payload) for e in events if e.kind == "turn"]
    assert result.correct is True
    assert judge.remaining == 0 and result.llm_calls == 3
    assert policy.remaining == 0 and result.worker_llm_calls == 4
    # the verifier never saw the worker's system prompt, the worker never saw a verdict
    assert all("<score>" not in m.content for r in policy.requests for m in r.messages)


def test_a_chained_verifier_ranks_by_the_rules_and_logs_the_models_tiebreak(
    tmp_path: Path,
) -> None:
    policy = ScriptedModel([*MADE_UP, *RIGHT], name="policy")
    # the rules decide the made-up answer (0) for both parts: the model judges 3 steps
    judge = ScriptedModel(["<score>0.5</score><summary>hm</summary>"] * 3, name="verifier")
    events: list[Event] = []
    run_search_task(
        _task(),
        _config(verifier="deterministic>hybrid"),
        tmp_path,
        set(),
        events.append,
        policy,
        verifier_model=judge,
    )
    (result,) = [TurnResult.model_validate(e.payload) for e in events if e.kind == "turn"]
    assert result.correct is True and judge.remaining == 0 and result.llm_calls == 3
    (log,) = [
        json.loads(x) for x in (tmp_path / "search" / "longds_toy.jsonl").read_text().splitlines()
    ]
    # the rules' scores rank (the model's 0.5 does not lower the right rollout below 1)
    assert [c["score"] for c in log["candidates"]] == [0.0, 1.0] and log["best"] == 1
    assert [c["tiebreak"] for c in log["candidates"]] == [0.0, 0.5]


def test_search_branches_of_a_task_have_their_own_kernels_and_folders(tmp_path: Path) -> None:
    branches = task_branches(_task(), tmp_path / "w", 60)
    root = branches.root()
    try:
        root.run(Proposal(code="import pandas as pd\ns = pd.read_csv('data/sales.csv')"))
        a, b = branches.child(root), branches.child(root)
        try:
            a.run(Proposal(code="s['units'] = 0\nopen('mine.txt', 'w').write('a')"))
            probe = b.environment().probe(
                "(int(s['units'].sum()), __import__('os').path.exists('mine.txt'))"
            )
            assert probe.value == [sum_units(), False]
            assert root.environment().probe("int(s['units'].sum())").value == sum_units()
            assert a.tracked.kernel.workdir != b.tracked.kernel.workdir
        finally:
            a.close()
            b.close()
    finally:
        root.close()


def sum_units() -> int:
    with open(TOY / "data" / "sales.csv", newline="") as fh:
        return sum(int(r["units"]) for r in csv.DictReader(fh))


def test_search_needs_the_llm_worker_without_a_supervisor(tmp_path: Path) -> None:
    bad = RunConfig(suite="longds", path=str(TOY), worker="llm", search="beam", manager="window")
    with pytest.raises(StateguardError, match="--search needs --worker llm and --manager none"):
        run_benchmark(bad, tmp_path / "run")
    with pytest.raises(StateguardError, match="needs a chat model"):
        run_search_task(_task(), _config(), tmp_path, set(), lambda e: None, None)


def test_bench_run_cli_with_search_and_a_scripted_model(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([*MADE_UP, *RIGHT]))
    cfg = tmp_path / "model.toml"
    cfg.write_text(f'[llm]\nbackend = "scripted"\nscript_path = "{script}"\n')
    out = tmp_path / "run"
    args = [
        "bench",
        "run",
        "--suite",
        "longds",
        "--path",
        str(TOY),
        "--out",
        str(out),
        "--worker",
        "llm",
        "--search",
        "best-of-n",
        "--n",
        "2",
        "--verifier",
        "deterministic",
        "--turn-limit",
        "1",
        "--max-steps",
        "3",
        "--model-config",
        str(cfg),
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    (turn,) = RunStore(out).results()
    assert turn.correct is True and turn.attempts == 2
    saved = RunStore(out).config()
    assert (saved.search, saved.search_n, saved.verifier) == ("best-of-n", 2, "deterministic")
    bad = CliRunner().invoke(app, [*args[:-2], "--search", "greedy"])
    assert bad.exit_code != 0 and "greedy" in bad.output
    unknown = CliRunner().invoke(app, [*args[:-2], "--verifier", "rules>oracle"])
    assert unknown.exit_code != 0 and "rules>oracle" in unknown.output
    assert RunConfig(suite="longds", path=".", verifier="deterministic>hybrid").verifier == (
        "deterministic>hybrid"
    )


DSEVAL = Path(__file__).resolve().parents[1] / "bench" / "fixtures" / "dseval_spec"


def test_beam_on_dseval_judges_the_winners_own_kernel(tmp_path: Path) -> None:
    # turn 1 of the fixture session: load inputs/points.csv into df (namespace_check df)
    task = load_suite("dseval", str(DSEVAL), turn_limit=1).tasks[0]
    fatal = f"{F}python\ndf = pd.read_csv('inputs/points.csv') + 1j * 'x'\n{F}"
    good = f"{F}python\ndf = pd.read_csv('inputs/points.csv')[COLUMNS]\ndf.shape\n{F}"
    done = "<answer>df is loaded</answer>"
    policy = ScriptedModel([fatal, good, done, done, done, done], name="policy")
    config = RunConfig(
        suite="dseval",
        path=str(DSEVAL),
        worker="llm",
        search="beam",
        search_n=2,
        turn_limit=1,
        max_steps_per_turn=3,
    )
    events: list[Event] = []
    run_search_task(task, config, tmp_path, set(), events.append, policy)
    (result,) = [TurnResult.model_validate(e.payload) for e in events if e.kind == "turn"]
    assert result.correct is True, result.judge_reason
    (log,) = [
        json.loads(x)
        for x in (tmp_path / "search" / f"{task.task_id}.jsonl").read_text().splitlines()
    ]
    best = log["candidates"][log["best"]]
    assert best["score"] == 1.0 and best["steps"][0]["code"].startswith("df = pd.read_csv")
    assert policy.remaining == 0
    # the prompt names the inputs/ copy the kernel has, not a data/ directory it lacks
    system = policy.requests[0].messages[0].content
    assert "directory `inputs/`" in system and "directory `data/`" not in system
