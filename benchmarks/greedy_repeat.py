"""Is greedy decoding of the embedded model reproducible? One prompt, sent N times.

    python benchmarks/greedy_repeat.py --repeats 2 [--tokens 120]

Loads the embedded model once and sends the same prompt (about 1,000 tokens) ``repeats``
times at temperature 0; prints each reply's length, whether it equals the first, and
where the first difference is. The second and later calls reuse the KV cache of the
first (llama.cpp keeps the longest common prefix), as the worker's calls within a turn do.
Run it twice, with and without a busy-loop process beside it, to compare under load.
"""

from __future__ import annotations

import argparse
import json
import time

from stateguard.llm.local import LlamaCppModel
from stateguard.llm.messages import ChatMessage

PROMPT = [
    ChatMessage(role="system", content="You are a careful data analyst. " * 150),
    ChatMessage(
        role="user",
        content=(
            "Write a short thought and one python block that loads data/orders.csv with "
            "pandas, adds a column net_revenue = units * unit_price * (1 - discount), "
            "groups by region and prints the largest total."
        ),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=120)
    args = parser.parse_args()
    model = LlamaCppModel()
    replies = []
    for _ in range(args.repeats):
        started = time.monotonic()
        reply = model.complete(PROMPT, max_tokens=args.tokens, temperature=0.0).content
        replies.append((reply, time.monotonic() - started))
    first = replies[0][0]
    for i, (reply, seconds) in enumerate(replies):
        parts = next(
            (k for k in range(min(len(first), len(reply))) if first[k] != reply[k]),
            None if len(first) == len(reply) else min(len(first), len(reply)),
        )
        row = {"call": i, "chars": len(reply), "same_as_first": reply == first}
        row |= {"first_difference_at": parts, "seconds": round(seconds, 1)}
        print(json.dumps(row))


if __name__ == "__main__":
    main()
