"""``--worker llm`` with a scripted model, and the Ray backend on a local Ray."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_bench_runner_support import read_turns

from stateguard.bench.llm_run import describe_inputs, run_llm_task
from stateguard.bench.loaders import load_longds_task
from stateguard.bench.records import RunConfig, RunStore, TurnResult
from stateguard.bench.runner import Event, run_benchmark
from stateguard.errors import StateguardError
from stateguard.llm import ScriptedModel

pytestmark = pytest.mark.kernel


def _reference_answers(task, task_dir: Path) -> dict[int, object]:
    """Each turn's ``answer`` from running the reference code apart, in one namespace."""
    namespace: dict[str, object] = {}
    previous = Path.cwd()
    os.chdir(task_dir)
    try:
        out = {}
        for turn in task.turns:
            exec(turn.reference_code, namespace)
            out[turn.turn_id] = namespace["answer"]
        return out
    finally:
        os.chdir(previous)


def _agent(task, task_dir: Path):
    """A scripted agent: runs the turn's reference code, then answers with its value.

    It tells turns apart by the task's questions and keeps its own count of what it sent;
    the values come from running the reference code apart, never from the worker's prompt.
    """
    codes = {t.turn_id: t.reference_code for t in task.turns}
    questions = {t.turn_id: t.question.strip() for t in task.turns}
    answers = _reference_answers(task, task_dir)
    sent: dict[int, int] = {}

    def reply(messages) -> str:
        asked = "\n".join(m.content for m in messages if m.role == "user")
        turn = max(i for i, q in questions.items() if q in asked)
        sent[turn] = sent.get(turn, 0) + 1
        if sent[turn] == 1:
            code = codes[turn] + "\nimport json\nprint(json.dumps(answer))"
            return f"I will compute it.\n```python\n{code}\n```"
        return f"<answer>{json.dumps(answers[turn])}</answer>"

    return ScriptedModel(reply)


def test_llm_worker_runs_the_agent_and_judges_its_answers(longds_toy, tmp_path) -> None:
    task = load_longds_task(longds_toy)
    config = RunConfig(suite="longds", path=str(longds_toy), worker="llm")
    events: list[Event] = []
    run_llm_task(task, config, tmp_path, set(), events.append, _agent(task, longds_toy))
    results = [TurnResult.model_validate(e.payload) for e in events if e.kind == "turn"]
    assert [r.turn_id for r in results] == [1, 2, 3, 4, 5, 6]
    assert all(r.correct is True for r in results)
    assert all(r.worker_llm_calls == 2 and r.llm_calls == 0 for r in results)
    assert results[4].depends_on == (2, 4)
    assert json.loads(results[0].answer) == {"n_orders": 12, "total_revenue": 164.5}
    traj = (tmp_path / "trajectories" / f"{task.task_id}.jsonl").read_text().splitlines()
    assert any(json.loads(line)["type"] == "answer" for line in traj)
    # the kernel printed the very values the agent answered with (computed apart)
    records = [json.loads(line) for line in traj]
    printed = [r["execution"]["stdout"].strip() for r in records if r.get("execution")]
    assert printed == [r.answer for r in results]
    assert "data/sales.csv" in describe_inputs(task)
    with pytest.raises(StateguardError, match="needs a chat model"):
        run_llm_task(task, config, tmp_path / "x", set(), events.append, None)


def test_inject_requires_the_replay_worker(longds_toy, tmp_path) -> None:
    config = RunConfig(suite="longds", path=str(longds_toy), worker="llm", inject="stale-reuse")
    with pytest.raises(StateguardError, match="--inject needs --worker replay"):
        run_benchmark(config, tmp_path / "run")


def test_ray_backend_on_a_local_ray(longds_toy, tmp_path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'stateguard[ray]')")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        config = RunConfig(suite="longds", path=str(longds_toy))
        outcome = run_benchmark(config, tmp_path / "run", backend="ray")
    finally:
        ray.shutdown()
    assert outcome.turns_recorded == 6 and outcome.errors == 0
    turns = read_turns(tmp_path / "run")
    assert sorted(t["turn_id"] for t in turns) == [1, 2, 3, 4, 5, 6]
    assert all(r.correct for r in RunStore(tmp_path / "run").results())
