"""Tokens of the state hint per turn: the full hint against the compact one.

Replays an example's reference solution (``examples/NAME/reference.py``: one cell per
turn, then the gold answer) through a `GuardedSession` with the deterministic manager
(no model call), and prints, for each turn, the states the manager's hint lists, the
tokens of the full ``<analytical_state_hint>`` and of the compact one the worker sends
(`stateguard.hints.compact`), and which states the compact one keeps (``*``: marked
stale). Tokens are counted with the embedded model's tokenizer when llama-cpp-python and
the model are installed, else estimated (four characters a token; ``--estimate``).

    python benchmarks/hint_tokens.py examples/unit_economics examples/freight_margin
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from stateguard.guard import GuardedSession
from stateguard.hints import compact_state_hint
from stateguard.kernel import KernelSession
from stateguard.llm.messages import estimate_tokens
from stateguard.manager import Hint
from stateguard.worker.formatting import format_hint
from stateguard.worker.tasks import load_task


def _counter(estimate: bool) -> tuple[Callable[[str], int], str]:
    if not estimate:
        try:
            from stateguard.llm import LlamaCppModel

            model = LlamaCppModel()
            model.load()
            return model.count_tokens, "the embedded model's tokenizer"
        except Exception as exc:  # no llama.cpp or no model: estimate
            print(f"(no tokenizer: {exc}; estimating)", file=sys.stderr)
    return estimate_tokens, "an estimate of four characters a token"


def _reference(example: Path) -> tuple[str, ...]:
    spec = importlib.util.spec_from_file_location("reference", example / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.TURN_CODE)


def measure(example: Path, count: Callable[[str], int]) -> list[dict]:
    """Per turn: states listed, full and compact hint tokens, the states kept."""
    task = load_task(example)
    cells = _reference(example)
    rows = []
    with (
        tempfile.TemporaryDirectory() as work,
        GuardedSession(
            KernelSession(workdir=Path(work), data_dir=example / "data"), manager="deterministic"
        ) as guard,
    ):
        for number, (turn, code) in enumerate(zip(task.turns, cells, strict=True), 1):
            hints = guard.begin_turn(turn.question, turn=number, context=turn.context)
            full: Hint | None = next((h for h in hints if h.kind == "state"), None)
            asked = f"{turn.context}\n{turn.question}"  # what the worker matches states on
            compact = compact_state_hint(full, asked) if full is not None else None
            rows.append(
                {
                    "turn": number,
                    "states_listed": len(full.state_ids) if full else 0,
                    "full_tokens": count(format_hint(full)) if full else 0,
                    "compact_tokens": count(format_hint(compact)) if compact else 0,
                    "kept": [
                        s + ("*" if "STALE" in line else "")
                        for s, line in zip(
                            compact.state_ids if compact else (),
                            [
                                ln
                                for ln in (compact.text if compact else "").splitlines()
                                if ln[:1] == "S"
                            ],
                            strict=False,
                        )
                    ],
                }
            )
            outcome = guard.run_cell(code)
            value = outcome.execution.result or outcome.execution.stdout
            guard.propose_answer(json.dumps(turn.answer) if turn.answer is not None else value)
            guard.end_turn()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="+", type=Path)
    parser.add_argument("--estimate", action="store_true", help="estimate, no tokenizer")
    args = parser.parse_args()
    count, how = _counter(args.estimate)
    print(f"tokens counted with {how}")
    for example in args.examples:
        rows = measure(example, count)
        print(f"\n## {example.name}\nturn  states  full_tok  compact_tok  kept (* stale)")
        for r in rows:
            print(
                f"{r['turn']:>4} {r['states_listed']:>7} {r['full_tokens']:>9} "
                f"{r['compact_tokens']:>12}  {' '.join(r['kept']) or '(no hint)'}"
            )
        full = [r["full_tokens"] for r in rows]
        compact = [r["compact_tokens"] for r in rows]
        print(
            f"mean {sum(full) / len(full):.0f} full vs {sum(compact) / len(compact):.0f} compact "
            f"tokens per turn; max {max(full)} vs {max(compact)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
