"""Resuming a benchmark run after a crash or a kill: no finished turn is redone or duplicated."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_bench_runner_support import read_turns, tiny_dseval_suite

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


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        frontier += kids
    return out


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
        victims = _descendants(proc.pid)
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
