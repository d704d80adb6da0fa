"""The main job, side by side: each multi-turn example with ``--manager none`` and ``hybrid``.

Runs every example under every manager through `RunSession` (the path of `stateguard run`,
with its default budgets: steps and tokens, no wall-clock budget) on the configured model
(the embedded one by default), one run after another, and prints per turn, for each
manager: correct (✓/✗, or ``-`` without an answer; ``?`` after it for an unconfirmed
answer, one turned away on a doubt alone when none was accepted), steps, generated tokens, malformed
replies, how the turn ended (answer, steps, tokens, time, no_progress) and its time;
then the totals. Writes the runs to ``OUT/EXAMPLE-MANAGER/`` and the table as JSON to
``OUT/main_job.json``.

    nice -n 5 python benchmarks/main_job.py --out /tmp/main-job
    python benchmarks/main_job.py --out /tmp/main-job --examples examples/freight_margin
    python benchmarks/main_job.py --runs none=runs/a hybrid=runs/b   # tabulate finished runs
    python benchmarks/main_job.py --out /tmp/busy --managers hybrid --busy 1

``--busy N`` starts N busy-loop processes beside the runs (stopped at the end) to show
that the answers do not depend on the machine's load; ``--compare A B`` prints, per
turn, whether two finished runs gave the same answers.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from stateguard.llm import UsageMeter, build_model, load_model_config
from stateguard.worker.run import RunSession
from stateguard.worker.summary import RunSummary, TurnOutcome
from stateguard.worker.tasks import load_task

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = tuple(
    ROOT / "examples" / name
    for name in (
        "unit_economics",
        "freight_margin",
        "energy_bills",
        "course_fees",
        "ticket_sales",
        "rental_fleet",
        "food_delivery",
        "parcel_shipping",
        "tutoring_sessions",
        "clinic_visits",
        "laundry_rounds",
        "ferry_crossings",
        "bike_share",
        "paddle_hire",
        "audio_guides",
        "plant_sales",
        "campsite_stays",
        "kiln_firings",
    )
)
MANAGERS = ("none", "hybrid")


def _cell(t: TurnOutcome) -> str:
    mark = "-" if t.answer is None else ("✓" if t.correct else "✗")
    mark += "?" if t.unconfirmed else " "
    cut = sum(t.cut_replies.values())
    malformed = f"{t.invalid_steps}" + (f"(cut {cut})" if cut else "")
    return (
        f"{mark} {t.steps:>2}st {t.completion_tokens:>5}tok {malformed:>3}mal "
        f"{t.ended:<11} {t.wall_time:>5.0f}s"
    )


def _row(t: TurnOutcome) -> dict[str, Any]:
    return {
        "turn": t.turn,
        "answer": t.answer,
        "unconfirmed": t.unconfirmed,
        "gold": t.gold,
        "correct": t.correct,
        "ended": t.ended,
        "steps": t.steps,
        "completion_tokens": t.completion_tokens,
        "prompt_tokens": t.prompt_tokens,
        "malformed": t.invalid_steps,
        "cut_replies": t.cut_replies,
        "hint_tokens": t.hint_tokens,
        "seconds": round(t.wall_time, 1),
    }


def print_side_by_side(name: str, runs: dict[str, RunSummary]) -> None:
    """One line per turn, one column per manager, then the totals."""
    managers = list(runs)
    print(f"\n## {name}")
    print("turn | " + " | ".join(f"{m:<45}" for m in managers))
    turns = max(len(r.turns) for r in runs.values())
    for i in range(turns):
        cells = [_cell(r.turns[i]) if i < len(r.turns) else "" for r in runs.values()]
        print(f"{i + 1:>4} | " + " | ".join(f"{c:<45}" for c in cells))
    totals = []
    for m in managers:
        r = runs[m]
        cuts = sum(sum(t.cut_replies.values()) for t in r.turns)
        malformed = sum(t.invalid_steps for t in r.turns)
        tokens = sum(t.completion_tokens for t in r.turns)
        hint = [t.hint_tokens for t in r.turns]
        totals.append(
            f"{r.correct}/{r.graded} correct, {malformed} malformed ({cuts} cut), "
            f"{tokens} tok, {r.wall_time / 60:.1f} min, hint tok/turn max {max(hint, default=0)}"
        )
    print("all  | " + " | ".join(f"{c:<45}" for c in totals))


def _summary(run_dir: Path) -> RunSummary:
    """The run in ``run_dir``: a run directory, or the ``--out`` of this script holding
    exactly one run (``OUT/<example>-<manager>/``). Anything else is a clear error."""
    found = run_dir / "answers.json"
    if not found.is_file():
        runs = sorted(run_dir.glob("*/answers.json")) if run_dir.is_dir() else []
        if len(runs) != 1:
            held = ", ".join(str(r.parent) for r in runs) or "none"
            raise SystemExit(
                f"{run_dir}: no answers.json here; the run directories under it: {held}"
            )
        found = runs[0]
    return RunSummary.model_validate_json(found.read_text(encoding="utf-8"))


def _busy(n: int) -> list[subprocess.Popen[bytes]]:
    code = "while True:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def run_all(examples: list[Path], managers: list[str], out: Path, busy: int) -> dict[str, Any]:
    """Run every example under every manager; returns the JSON table."""
    model = build_model(load_model_config({}, None), meter=UsageMeter())
    load = getattr(model, "load", None)
    if callable(load):
        load()
    table: dict[str, Any] = {"model": model.name, "busy_processes": busy, "examples": {}}
    loaders = _busy(busy)
    try:
        for example in examples:
            task = load_task(example)
            runs: dict[str, RunSummary] = {}
            for manager in managers:
                run_dir = out / f"{example.name}-{manager}"
                started = time.monotonic()
                with RunSession(task, model, run_dir, manager=manager) as run:
                    for turn in task.turns:
                        for _ in run.run_turn(
                            turn.question, turn.context, turn.answer, turn.tolerance
                        ):
                            pass
                runs[manager] = run.summary()
                print(
                    f"{example.name} {manager}: {runs[manager].correct}/{runs[manager].graded} "
                    f"in {(time.monotonic() - started) / 60:.1f} min ({run_dir})",
                    flush=True,
                )
            print_side_by_side(example.name, runs)
            table["examples"][example.name] = {
                m: {
                    "correct": r.correct,
                    "graded": r.graded,
                    "minutes": round(r.wall_time / 60, 1),
                    "turns": [_row(t) for t in r.turns],
                }
                for m, r in runs.items()
            }
    finally:
        for p in loaders:
            p.kill()
            p.wait()
    return table


def compare(a: Path, b: Path) -> int:
    """Print per turn whether two runs answered the same; returns the number of differences."""
    left, right = _summary(a), _summary(b)
    differ = 0
    for x, y in zip(left.turns, right.turns, strict=False):
        same = x.answer == y.answer
        differ += not same
        print(f"turn {x.turn:>2}: {'same' if same else 'DIFFERENT'}  {x.answer!r} | {y.answer!r}")
    print(f"{differ} of {min(len(left.turns), len(right.turns))} turns differ")
    return differ


def _example(text: str) -> Path:
    """A path as given, or the repo's example of that name when no such path exists."""
    path = Path(text)
    if not path.exists() and (ROOT / "examples" / text).is_dir():
        return ROOT / "examples" / text
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--examples",
        nargs="*",
        type=_example,
        default=list(EXAMPLES),
        help="example folders, or the names of the repo's examples (unit_economics, …)",
    )
    parser.add_argument("--managers", nargs="*", default=list(MANAGERS))
    parser.add_argument("--out", type=Path, default=Path("/tmp/stateguard-main-job"))
    parser.add_argument("--busy", type=int, default=0, help="busy-loop processes beside")
    parser.add_argument("--runs", nargs="*", help="MANAGER=RUN_DIR: tabulate finished runs")
    parser.add_argument("--compare", nargs=2, type=Path, help="two run directories")
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return 0
    if args.runs:
        runs = {}
        for item in args.runs:
            manager, _, path = item.partition("=")
            runs[manager] = _summary(Path(path))
        print_side_by_side(next(iter(runs.values())).task, runs)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    table = run_all(args.examples, args.managers, args.out, args.busy)
    (args.out / "main_job.json").write_text(json.dumps(table, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
