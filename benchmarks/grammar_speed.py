"""Generation speed of the embedded model with and without the step grammar.

Loads the embedded model once and generates, from the same prompts (a worker-like step
request over a small table), with: no grammar (free sampling), the unbounded step grammar,
and the bounded step grammar (`stateguard.llm.local.STEP_GRAMMAR`), each with the reply
bounds of the worker (`stateguard.llm.limits`) watched as the reply streams. Prints tokens
per second of generation (prompt evaluation excluded: each prompt is evaluated once
before the timed calls, and the timed calls reuse its cache), and the ratio to free
sampling.

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
) -> float:
    rates = []
    for q in QUESTIONS[:questions]:
        messages = [ChatMessage.system(SYSTEM), ChatMessage.user(q)]
        model.complete(messages, max_tokens=1)  # evaluate the prompt: timed calls reuse it
        for _ in range(repeats):
            start = time.perf_counter()
            response = model.complete(
                messages, max_tokens=tokens, grammar=grammar, cut=ReplyCut(), seconds=600
            )
            wall = time.perf_counter() - start
            n = response.usage.completion_tokens
            if n:
                rates.append(n / wall)
    return statistics.median(rates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    args = parser.parse_args()
    model = LlamaCppModel()
    model.load()
    results = {}
    for label, grammar in (
        ("free sampling", None),
        ("unbounded step grammar", UNBOUNDED_STEP_GRAMMAR),
        ("bounded step grammar", STEP_GRAMMAR),
    ):
        results[label] = _measure(model, grammar, args.tokens, args.repeats, args.questions)
        print(f"{label:<24} {results[label]:6.1f} tokens/s", flush=True)
    free = results["free sampling"]
    for label, rate in results.items():
        print(f"{label:<24} {rate:6.1f} tokens/s   {free / rate:4.2f}x the time of free sampling")
    print(f"(load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
