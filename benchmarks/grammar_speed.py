"""Generation speed of the embedded model with and without the step grammar.

Loads the embedded model once and generates, from the same prompts (a worker-like step
request over a small table), with: no grammar (free sampling), the unbounded step grammar,
and the bounded step grammar (`stateguard.llm.local.STEP_GRAMMAR`), each with the reply
bounds of the worker (`stateguard.llm.limits`) watched as the reply streams. Prints tokens
per second of generation (prompt evaluation excluded: each prompt is evaluated once
before the timed calls, and the timed calls reuse its cache), per wall-clock second and
per CPU second of this process (llama.cpp's threads included: on a machine shared with
other work, wall-clock speed says more about the load than about the grammar), and the
ratio to free sampling.

    python benchmarks/grammar_speed.py [--tokens 160] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from stateguard.llm import ChatMessage, LlamaCppModel
from stateguard.llm.limits import ReplyCut
from stateguard.llm.local import STEP_GRAMMAR, UNBOUNDED_STEP_GRAMMAR

SYSTEM = (
    "You are a data analyst working in a Python session. The DataFrame `sales` has "
    "columns region (str), units (int), unit_price (float). Reply with a short thought, "
    "then one ```python code block."
)
QUESTIONS = (
    "Write code that prints, for each region, the total of units times unit_price, the "
    "mean unit price, the number of rows, and the region with the highest total.",
    "Compute a new column revenue, then print the top 5 rows by revenue, the median "
    "revenue per region and a histogram of units with 10 bins as text.",
)


def _measure(
    model: LlamaCppModel, grammar: str | None, tokens: int, repeats: int, questions: int
) -> tuple[float, float]:
    """Median (tokens per wall-clock second, tokens per CPU second)."""
    walls, cpus = [], []
    for q in QUESTIONS[:questions]:
        messages = [ChatMessage.system(SYSTEM), ChatMessage.user(q)]
        model.complete(messages, max_tokens=1)  # evaluate the prompt: timed calls reuse it
        for _ in range(repeats):
            start, cpu = time.perf_counter(), time.process_time()
            response = model.complete(
                messages, max_tokens=tokens, grammar=grammar, cut=ReplyCut(), seconds=3600
            )
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            n = response.usage.completion_tokens
            if n:
                walls.append(n / wall)
                cpus.append(n / max(cpu, 1e-9))
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    args = parser.parse_args()
    # llama-cpp-python's own cache reuse: the timed calls then evaluate no prompt tokens
    # (the reproducible reuse would evaluate up to a batch of them again in every call)
    model = LlamaCppModel(reproducible=False)
    model.load()
    results: dict[str, tuple[float, float]] = {}
    for label, grammar in (
        ("free sampling", None),
        ("unbounded step grammar", UNBOUNDED_STEP_GRAMMAR),
        ("bounded step grammar", STEP_GRAMMAR),
    ):
        results[label] = _measure(model, grammar, args.tokens, args.repeats, args.questions)
        wall, cpu = results[label]
        print(f"{label:<24} {wall:6.2f} tokens/s  {cpu:6.2f} tokens/CPU-s", flush=True)
    free_wall, free_cpu = results["free sampling"]
    for label, (wall, cpu) in results.items():
        print(
            f"{label:<24} {free_wall / wall:4.2f}x the wall time, {free_cpu / cpu:4.2f}x the "
            "CPU time of free sampling per token"
        )
    print(f"(load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
