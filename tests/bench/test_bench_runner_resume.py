"""Resuming a benchmark run after a crash or a kill: no finished turn is redone or duplicated."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_bench_runner_support import read_turns, tiny_dseval_suite

from process_tree import descendants
from stateguard.bench.records import RunConfig, RunStore
from stateguard.bench.runner import Event, run_benchmark
from stateguard.errors import StateguardError


class _Crash(Exception):
    pass


def test_torn_last_line_is_dropped_on_reopen(tmp_path) -> None:
    store = RunStore(tmp_path)
    config = RunConfig(suite="longds", path="/x")
    store.prepare(config)
    store.turns_path.write_text(
        '{"task_id": "a", "turn_id": 1, "n_turns": 2, "correct": true}\n{"task_id": "a", "tu'
    )
    store.prepare(config)
    assert store.turns_path.read_text().count("\n") == 1
    assert store.done_turns() == {"a": {1}}
    with pytest.raises(StateguardError, match="other settings"):
        store.prepare(RunConfig(suite="longds", path="/x", manager="deterministic"))


@pytest.mark.kernel
def test_resume_after_simulated_crash(tmp_path) -> None:
    suite = tiny_dseval_suite(tmp_path / "suite", copies=2)
    out = tmp_path / "run"
    config = RunConfig(suite="dseval", path=str(suite))
    seen: list[Event] = []

    def crash_on_eighth_turn(event: Event) -> None:
        seen.append(event)
        if sum(e.kind == "turn" for e in seen) == 8:  # task 1 done, task 2 at turn 2
            raise _Crash

    with pytest.raises(_Crash):
        run_benchmark(config, out, progress=crash_on_eighth_turn)
    assert len(read_turns(out)) == 8

    resumed: list[Event] = []
    outcome = run_benchmark(config, out, progress=resumed.append)
    started = [e.task_id for e in resumed if e.kind == "task_start" and e.task_id != "*"]
    assert started == ["dseval-02-tiny-orders"]  # the finished task is not run again
    assert outcome.turns_recorded == 4  # only the missing turns of the partial task
    turns = read_turns(out)
    keys = [(t["task_id"], t["turn_id"]) for t in turns]
    assert len(keys) == len(set(keys)) == 12
    assert sum(t["correct"] is True for t in turns) == 10


@pytest.mark.kernel
def test_resume_after_kill(tmp_path) -> None:
    suite = tiny_dseval_suite(tmp_path / "suite", copies=2)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "stateguard.cli.main",
        "bench",
        "run",
        "--suite",
        "dseval",
        "--path",
        str(suite),
        "--out",
        str(out),
        "--jobs",
        "2",  # the process pool: two tasks, two kernels, killed together
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            path = out / "turns.jsonl"
            if path.exists() and path.read_text().count("\n") >= 3:
                break
            time.sleep(0.05)
        victims = descendants(proc.pid)
        proc.kill()
        for pid in victims:  # the kernels it started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    before = read_turns(out)
    assert 3 <= len(before) < 12, "the kill should land mid-run"

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    after = read_turns(out)
    keys = [(t["task_id"], t["turn_id"]) for t in after]
    assert len(keys) == len(set(keys)) == 12
    assert after[: len(before)] == before  # finished turns are kept as they were
    assert (out / "metrics.json").exists()


# ---------------------------------------------------------------- --worker llm, kill -9
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import FakeOpenAIServer, FakeReply  # noqa: E402

from stateguard.bench.loaders import load_longds_task  # noqa: E402
from stateguard.worker.events import read_trajectory  # noqa: E402

_TIMES = {"ts", "seconds", "wall_time", "token", "created_at", "committed_at"} | {
    "hook_seconds",
    "kernel_seconds",
    "host_seconds",
}


def _prompt_key(body: dict) -> str:
    prompt = {k: body.get(k) for k in ("messages", "max_tokens", "temperature", "stop")}
    return hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).hexdigest()


class _PromptModel:
    """Scripted replies for one run; afterwards the same reply for the same prompt (as a
    model at temperature 0 would answer); a prompt never seen is an HTTP error."""

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.by_prompt, self.unknown, self.live = list(replies), {}, 0, True

    def __call__(self, body: dict) -> str | FakeReply:
        key = _prompt_key(body)
        if self.live:
            if not self.replies:
                return FakeReply(status=400, error_message="script exhausted")
            self.by_prompt[key] = self.replies.pop(0)
            return self.by_prompt[key]
        if key not in self.by_prompt:
            self.unknown += 1
            return FakeReply(status=400, error_message="a prompt the model never saw")
        return self.by_prompt[key]


def _normal(value):
    if isinstance(value, dict):
        if value.get("mime") == "application/vnd.stateguard.lineage+json":
            value = {**value, "data": json.loads(value["data"])}
        return {k: _normal(v) for k, v in value.items() if k not in _TIMES}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _trajectory(path: Path) -> list:
    events = list(read_trajectory(path))  # every line valid, or this raises
    return [_normal(e.model_dump(mode="json")) for e in events]


def _keys(path: Path) -> list[tuple]:
    return [
        (e["type"], e["turn"], e.get("step"), e.get("role"))
        for e in _trajectory(path)
        if e["type"] in ("turn_start", "step", "answer", "model_message")
    ]


def _turn_results(out: Path) -> list[dict]:
    keep = ("task_id", "turn_id", "answer", "correct", "attempts", "worker_llm_calls")
    return [{k: t.get(k) for k in keep} for t in read_turns(out)]


@pytest.mark.kernel
def test_llm_worker_kill_9_then_rerun_keeps_trajectories_whole(longds_toy, tmp_path) -> None:
    task = load_longds_task(longds_toy)
    replies = []
    for turn in task.turns:
        code = turn.reference_code + "\nimport json\nprint(json.dumps(answer))"
        if turn.turn_id == 5:  # the kill lands while this cell sleeps, after turn 4 changed sales
            code += "\nimport time\ntime.sleep(3)"
        replies += [f"I will compute it.\n```python\n{code}\n```", "<answer>as printed</answer>"]
    model = _PromptModel(replies)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEGUARD_", "OPENAI_"))}

    with FakeOpenAIServer(model) as server:

        def cmd(out: Path) -> list[str]:
            return [
                sys.executable, "-m", "stateguard.cli.main", "bench", "run",
                "--suite", "longds", "--path", str(longds_toy), "--out", str(out),
                "--worker", "llm", "--manager", "deterministic",
                "--base-url", server.base_url, "--model", "fake-model",
            ]  # fmt: skip

        full, killed = tmp_path / "full", tmp_path / "killed"
        done = subprocess.run(cmd(full), capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not model.replies and len(read_turns(full)) == 6
        model.live = False  # from now on: answers by prompt only

        traj = killed / "trajectories" / f"{task.task_id}.jsonl"
        proc = subprocess.Popen(
            cmd(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and proc.poll() is None:
                if traj.exists() and "time.sleep(3)" in traj.read_text():
                    break
                time.sleep(0.05)
            assert proc.poll() is None, "the run ended before the kill"
            time.sleep(0.5)
            victims = descendants(proc.pid)
            proc.kill()
            for pid in victims:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        before_turns = read_turns(killed)
        assert len(before_turns) == 4, "the kill should land in turn 5"
        kept = traj.read_text().splitlines()
        finished_lines = [ln for ln in kept if json.loads(ln)["turn"] <= 4]

        again = subprocess.run(cmd(killed), capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert model.unknown == 0  # the rerun sent only prompts of the uninterrupted run
    # turns.jsonl: 0 lost, 0 duplicated, the same results as the uninterrupted run
    assert _turn_results(killed) == _turn_results(full)
    # the trajectory: every line valid, turns 1-4 kept verbatim, 5-6 appended once
    lines = traj.read_text().splitlines()
    assert lines[: len(finished_lines)] == finished_lines
    keys = _keys(traj)
    assert keys == _keys(full / "trajectories" / f"{task.task_id}.jsonl")
    steps = [k for k in keys if k[0] in ("step", "answer")]
    assert len(steps) == len(set(steps))
    assert _trajectory(traj) == _trajectory(full / "trajectories" / f"{task.task_id}.jsonl")
    # the half-finished turn 5 was set aside, not lost
    quarantined = traj.with_suffix(".quarantined.jsonl").read_text().splitlines()
    assert quarantined and all(json.loads(ln)["turn"] == 5 for ln in quarantined)
