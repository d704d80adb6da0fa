"""``kill -9`` of a real ``stateguard run`` mid-run, then ``stateguard run --resume``.

The model is an OpenAI-compatible fake on loopback. The uninterrupted run answers
from a script, one reply per request, and the fake remembers which prompt got which
reply; the killed and the resumed runs are answered by prompt, as a model at
temperature 0 would answer, and a prompt never seen before is an HTTP error. So the
resumed run must send the very prompts of the uninterrupted one, and its answers,
states, trajectory, notebook and report must equal the uninterrupted run's.
"""

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
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, FakeReply
from resume_helpers import assert_same_run, turn_keys
from worker_helpers import MINI_CSV

from process_tree import alive, descendants

pytestmark = pytest.mark.kernel

F = "```"
REPLIES = [
    # turn 1
    f"{F}python\nimport pandas as pd\ndf = pd.read_csv('data/t.csv')\nint(df.a.sum())\n{F}",
    "<answer>6</answer>",
    # turn 2
    f"{F}python\nm = float(df.b.mean())\nm\n{F}",
    "<answer>20.0</answer>",
    # turn 3: the kill lands while this cell sleeps
    f"{F}python\nimport time\ndf['ab'] = df.a * df.b\ntime.sleep(3)\nprint('slept')\n{F}",
    f"{F}python\nint(df.ab.max())\n{F}",
    "<answer>90</answer>",
]
TASK = (
    "name: mini3\ndata: data\nturns:\n"
    "  - question: Sum of a?\n    answer: 6\n"
    "  - question: Mean of b?\n    answer: 20\n"
    "  - question: Max of a times b?\n    answer: 90\n"
)
ENV_VARS = ("BASE_URL", "MODEL", "API_KEY", "BACKEND", "MODEL_PATH")


def _key(body: dict[str, Any]) -> str:
    prompt = {k: body.get(k) for k in ("messages", "max_tokens", "temperature", "stop")}
    return hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).hexdigest()


class PromptModel:
    """Scripted replies for one run; afterwards the same reply for the same prompt."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.by_prompt: dict[str, str] = {}
        self.unknown = 0

    def scripted(self, body: dict[str, Any]) -> str | FakeReply:
        if not self.replies:
            return FakeReply(status=400, error_message="script exhausted")
        reply = self.replies.pop(0)
        self.by_prompt[_key(body)] = reply
        return reply

    def by_prompt_only(self, body: dict[str, Any]) -> str | FakeReply:
        reply = self.by_prompt.get(_key(body))
        if reply is None:
            self.unknown += 1
            return FakeReply(status=400, error_message="a prompt the model never saw")
        return reply


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEGUARD_", "OPENAI_"))}
    env["COLUMNS"] = "1000"
    for name in ENV_VARS:
        env.pop(f"STATEGUARD_{name}", None)
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "stateguard.cli.main", "run", *args]


def _task(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "t.csv").write_text(MINI_CSV)
    (root / "task.yaml").write_text(TASK)
    return root


def _sleeping_cell_started(trajectory: Path) -> bool:
    if not trajectory.exists():
        return False
    for line in trajectory.read_text().splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if event.get("role") == "assistant" and "time.sleep(3)" in event.get("content", ""):
                return True
    return False


def test_kill_9_mid_run_then_resume_gives_the_uninterrupted_run(tmp_path: Path) -> None:
    task = _task(tmp_path / "task")
    model = PromptModel(REPLIES)
    common = ["--manager", "deterministic", "--model", "fake-model", "--max-steps", "5"]
    full, killed = tmp_path / "a" / "run", tmp_path / "b" / "run"  # same name: the report shows it

    with FakeOpenAIServer(model.scripted) as server:
        done = subprocess.run(
            _cmd(str(task), "--out", str(full), "--base-url", server.base_url, *common),
            capture_output=True,
            text=True,
            timeout=240,
            env=_env(),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "correct: 3/3" in done.stdout
    assert not model.replies

    with FakeOpenAIServer(model.by_prompt_only) as server:
        cmd = _cmd(str(task), "--out", str(killed), "--base-url", server.base_url, *common)
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
        )
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and proc.poll() is None:
                if _sleeping_cell_started(killed / "trajectory.jsonl"):
                    break
                time.sleep(0.05)
            assert proc.poll() is None, "the run ended before the kill"
            time.sleep(0.5)  # the cell is running in the kernel now
            victims = descendants(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL
        time.sleep(1.0)
        survivors = [p for p in victims if alive(p)]
        for pid in survivors:  # an unconfined kernel may outlive its parent: not our test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        keys_before = turn_keys_tolerant(killed)
        assert ("answer", 2, None) in keys_before and ("answer", 3, None) not in keys_before

        resumed = subprocess.run(
            _cmd("--resume", str(killed)),
            capture_output=True,
            text=True,
            timeout=240,
            env=_env(),
        )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed: 2 finished turn(s) replayed" in resumed.stdout
    assert "correct: 3/3" in resumed.stdout
    assert model.unknown == 0  # every prompt of the resumed run is one of the uninterrupted run
    keys = turn_keys(killed)
    assert len(keys) == len(set(keys)), "a turn or step was recorded twice"
    assert keys == turn_keys(full), "a turn or step was lost"
    assert_same_run(killed, full)
    record = json.loads((killed / "resumes.jsonl").read_text())
    # the worker's setup cell and the two turns' cells
    assert record["replayed_turns"] == 2 and record["replayed_cells"] == 3
    assert record["divergences"] == []
    print(f"replay of 2 turns (3 cells) into a fresh kernel: {record['replay_seconds']:.3f}s")
    if survivors:
        pytest.skip(f"kernel processes outlived the kill (unconfined kernel): {survivors}")


def turn_keys_tolerant(run_dir: Path) -> list[tuple[str, int, int | None]]:
    """`turn_keys` of a trajectory whose last line may be torn."""
    path = run_dir / "trajectory.jsonl"
    lines = path.read_text().splitlines()
    if lines and not lines[-1].endswith("}"):
        path.write_text("\n".join(lines[:-1]) + "\n")
        try:
            return turn_keys(run_dir)
        finally:
            path.write_text("\n".join(lines))
    return turn_keys(run_dir)


def test_resume_refuses_other_settings_and_a_plain_rerun(tmp_path: Path) -> None:
    task = _task(tmp_path / "task")
    run_dir = tmp_path / "run"
    model = PromptModel(REPLIES[:2])
    with FakeOpenAIServer(model.scripted) as server:
        cmd = _cmd(str(task), "--out", str(run_dir), "--base-url", server.base_url)
        cmd += ["--manager", "none", "--model", "fake-model", "--max-steps", "5"]
        first = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=_env())
        assert (run_dir / "run.json").is_file(), first.stdout + first.stderr
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=_env())
        assert again.returncode != 0 and "continue it with --resume" in again.stderr
        other = subprocess.run(
            _cmd("--resume", str(run_dir), "--max-steps", "7"),
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(),
        )
    assert other.returncode == 2
    assert "--max-steps: the run was started with 5, not 7" in other.stderr
    assert not (run_dir / "previous").exists()
