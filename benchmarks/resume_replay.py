"""What rebuilding a kernel costs: ``stateguard run --resume`` and a restart after a kill.

On the ten-turn example (``examples/unit_economics``, a scripted worker sending the
reference cells and their values, deterministic manager):

1. one uninterrupted run, with the wall time of each turn;
2. for a crash after turn k (the trajectory cut there, plus a torn line of turn k+1),
   ``RunSession(resume=True)``: the seconds spent replaying turns 1..k into a fresh
   kernel, manager and store, next to what turns 1..k took in the run (model time
   there is ~0: the model is scripted, so this is the kernel-and-manager share);
3. a kernel killed after the cells of turns 1..k (a cell that ignores the interrupt):
   the seconds the guarded session spends running the cells that had succeeded again.

    python benchmarks/resume_replay.py
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import stateguard.kernel.session as session_module
from stateguard.guard import GuardedSession
from stateguard.kernel import KernelSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.run import RunSession, run_task
from stateguard.worker.tasks import load_task

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "unit_economics"
STUBBORN = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "unit_economics_reference", EXAMPLE / "reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _replies(codes: list[str], values: list[object], first: int = 1) -> list[str]:
    out = []
    for code, value in list(zip(codes, values, strict=True))[first - 1 :]:
        out += [f"I compute it.\n```python\n{code}```", f"<answer>{value!r}</answer>"]
    return out


def _cut(run_dir: Path, k: int) -> None:
    """The run directory as a kill in turn k+1 leaves it (trajectory and calls cut)."""
    path = run_dir / "trajectory.jsonl"
    lines = path.read_text().splitlines()
    answers = [i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "answer"]
    keep = lines[: answers[k - 1] + 1]
    path.write_text("\n".join(keep) + "\n" + lines[answers[k - 1] + 1][:40])


def main() -> int:
    reference = _reference()
    codes, values = list(reference.TURN_CODE), reference.compute_answers()
    task = load_task(EXAMPLE)
    root = Path(tempfile.mkdtemp(prefix="sg-resume-bench-"))
    try:
        full = root / "full"
        started = time.perf_counter()
        summary = run_task(
            task,
            ScriptedModel(_replies(codes, values)),
            "deterministic",
            full,
            max_steps_per_turn=4,
        )
        total = time.perf_counter() - started
        turn_times = [t.wall_time for t in summary.turns]
        print(f"uninterrupted run: {len(turn_times)} turns, {total:.2f}s")
        print(f"{'crash after':>11} {'turns 1..k took':>16} {'replay':>8} {'cells':>6}")
        for k in (3, 6, 9):
            run_dir = root / f"cut{k}"
            shutil.copytree(full, run_dir, symlinks=True)
            _cut(run_dir, k)
            model = ScriptedModel(_replies(codes, values, k + 1))
            with RunSession(
                task, model, run_dir, manager="deterministic", max_steps_per_turn=4, resume=True
            ) as run:
                for turn in task.turns[run.turns_done :]:
                    list(run.run_turn(turn.question, turn.context, turn.answer, turn.tolerance))
            done = run.resumed
            assert done is not None and not done.divergences, done
            print(
                f"{k:>11} {sum(turn_times[:k]):>15.2f}s {done.replay_seconds:>7.2f}s "
                f"{done.replayed_cells:>6}"
            )
        session_module._INTERRUPT_GRACE = 1.0
        print(f"{'killed after':>12} {'rebuild':>8} {'cells':>6}")
        for k in (3, 6, 9):
            work = root / f"kill{k}"
            kernel = KernelSession(workdir=work, data_dir=EXAMPLE / "data", default_timeout=60)
            with GuardedSession(kernel, manager=NullSupervisor()) as guard:
                guard.begin_turn("q")
                for code in codes[:k]:
                    assert guard.run_cell(code).ok
                outcome = guard.run_cell(STUBBORN, timeout=1)
                rebuilt = outcome.rebuild
                assert rebuilt is not None and rebuilt.failed is None
                print(f"{k:>12} {rebuilt.seconds:>7.2f}s {len(rebuilt.replayed):>6}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
