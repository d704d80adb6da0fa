"""Per-turn cost and outcome of the worker on a task with a real model.

Runs the first ``--turns`` turns of a task through `RunSession` (the same path as
`stateguard run`) and prints, per turn: wall time, steps, answered, correct, malformed
replies (a corrective message for form), repeated cells (not re-run), well-formed
answers refused before review (refu: numbers never shown, or an earlier turn's answer
copied), answers the formatting step wrote
from printed output without a model call (fmt), why a turn has
no answer, and prompt tokens (p_tok), the prompt tokens the backend evaluated rather
than reused from its cache (p_eval), and completion tokens. Writes the same as JSON to
``RUN_DIR/turns.json``. ``--option key=value`` passes a worker option through
(e.g. ``turn_seconds=120``); an option the installed worker does not know fails.

    nice -n 15 python benchmarks/worker_turns.py examples/unit_economics \
        --out /tmp/ue-after --turns 10 --manager hybrid
    python benchmarks/worker_turns.py --compare /tmp/ue-before /tmp/ue-after
    python benchmarks/worker_turns.py --trajectory runs/unit-economics-TIME

``--trajectory`` reads the run directory of a `stateguard run` instead (e.g. the
README's command, run as a user would).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from stateguard.llm import UsageMeter, build_model, load_model_config
from stateguard.worker.events import (
    AnswerRecorded,
    ModelMessage,
    StepRecord,
    TurnStarted,
    read_trajectory,
)
from stateguard.worker.loop import FORMATTED_THOUGHT
from stateguard.worker.run import RunSession
from stateguard.worker.summary import REFUSED, REPEATS
from stateguard.worker.tasks import load_task


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    row: dict[str, Any] = {}
    for event in events:
        if isinstance(event, TurnStarted):
            row = {"turn": event.turn, "malformed": 0, "repeated": 0, "cells": 0, "ungrounded": 0}
            row["formatted"] = 0
            row |= {"prompt_tokens": 0, "evaluated_tokens": 0, "completion_tokens": 0, "calls": 0}
        elif isinstance(event, ModelMessage) and event.role == "assistant":
            row["calls"] += 1
            row["prompt_tokens"] += event.prompt_tokens
            row["evaluated_tokens"] += event.prompt_tokens - event.cached_prompt_tokens
            row["completion_tokens"] += event.completion_tokens
        elif isinstance(event, StepRecord):
            if event.problem in REPEATS:
                row["repeated"] += 1
            elif event.problem in REFUSED:  # well-formed answers refused (unseen numbers, copied)
                row["ungrounded"] += 1
            elif event.problem is not None:
                row["malformed"] += 1
            row["cells"] += event.execution is not None and not event.setup
            row["formatted"] += event.thought == FORMATTED_THOUGHT
        elif isinstance(event, AnswerRecorded):
            row |= {
                "steps": event.steps,
                "wall_time": round(event.wall_time, 1),
                "answer": event.answer,
                "gold": event.gold,
                "correct": event.correct,
                # a trajectory written before `ended` existed reads back as "answer"
                "ended": event.ended
                if event.answer is not None or event.ended != "answer"
                else "steps",
                "manager_llm_calls": event.manager_llm_calls,
            }
            rows.append(row)
    return rows


def _print(rows: list[dict[str, Any]], label: str) -> None:
    print(f"== {label}")
    head = (
        "turn  time_s steps calls cells malf rep refu fmt  p_tok  p_eval  c_tok mgr ok    "
        "ended   answer"
    )
    print(head)
    for r in rows:
        ok = {True: "yes", False: "no", None: "-"}[r["correct"]]
        print(
            f"{r['turn']:>4} {r['wall_time']:>7} {r['steps']:>5} {r['calls']:>5} "
            f"{r['cells']:>5} {r['malformed']:>4} {r['repeated']:>3} {r.get('ungrounded', 0):>4} "
            f"{r.get('formatted', 0):>3} "
            f"{r['prompt_tokens']:>6} {r.get('evaluated_tokens', r['prompt_tokens']):>7} "
            f"{r['completion_tokens']:>6} {r['manager_llm_calls']:>3} {ok:<5} "
            f"{r.get('ended') or '':<7} {str(r['answer'])[:60]}"
        )
    total = sum(r["wall_time"] for r in rows)
    answered = sum(r["answer"] is not None for r in rows)
    correct = sum(r["correct"] is True for r in rows)
    malformed = sum(r["malformed"] for r in rows)
    calls = sum(r["calls"] for r in rows)
    print(
        f"turns {len(rows)}  time {total:.0f}s  answered {answered}  correct {correct}  "
        f"malformed {malformed}/{calls} replies  repeated {sum(r['repeated'] for r in rows)}"
    )


def main() -> None:
    """Run the turns (or compare two earlier runs) and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task", type=Path, nargs="?")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--manager", default="hybrid")
    ap.add_argument("--max-steps", type=int, default=None)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--compare", type=Path, nargs="+", metavar="RUN_DIR")
    ap.add_argument("--trajectory", type=Path, nargs="+", metavar="RUN_DIR")
    args = ap.parse_args()
    if args.trajectory:
        for d in args.trajectory:
            rows = _rows(list(read_trajectory(d / "trajectory.jsonl")))
            (d / "turns.json").write_text(json.dumps({"turns": rows}, indent=2, default=str))
            _print(rows, str(d))
        return
    if args.compare:
        for d in args.compare:
            _print(json.loads((d / "turns.json").read_text())["turns"], str(d))
        return
    if args.task is None or args.out is None:
        ap.error("TASK and --out are required unless --compare is given")
    options: dict[str, Any] = dict(kv.split("=", 1) for kv in args.option)
    options = {k: _value(v) for k, v in options.items()}
    if args.max_steps is not None:
        options["max_steps_per_turn"] = args.max_steps
    task = load_task(args.task)
    model = build_model(load_model_config({}), meter=UsageMeter())
    load = getattr(model, "load", None)
    if callable(load):
        load()
    events: list[Any] = []
    started = time.monotonic()
    with RunSession(task, model, args.out, manager=args.manager, **options) as run:
        for turn in task.turns[: args.turns]:
            for event in run.run_turn(turn.question, turn.context, turn.answer, turn.tolerance):
                events.append(event)
                if isinstance(event, AnswerRecorded):
                    rows = _rows(events)
                    _print(rows[-1:], f"turn {event.turn}")
                    out = {"options": options, "manager": args.manager, "turns": rows}
                    out["wall_time"] = round(time.monotonic() - started, 1)
                    (args.out / "turns.json").write_text(json.dumps(out, indent=2, default=str))
    _print(_rows(events), str(args.out))


if __name__ == "__main__":
    main()
