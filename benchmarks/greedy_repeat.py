"""Is greedy decoding of the embedded model reproducible? One prompt, sent N times.

    python benchmarks/greedy_repeat.py --repeats 3 [--tokens 120] [--reuse aligned all]

For each cache-reuse mode (``aligned``: the default, whole aligned batches only, see
`stateguard.llm.aligned_cache`; ``all``: every cached token, llama-cpp-python's own
reuse) it loads the embedded model and sends the same prompt (about 1,000 tokens)
``repeats`` times at temperature 0. Odd repeats follow the previous one directly (the
whole prompt is cached); before even ones it sends another prompt that shares the
first's system message and asks something else, as the worker's calls of a turn do, so
the repeats meet different caches. It prints each reply's length, whether
it equals the first, where the first difference is, and the seconds per call, side by
side for the modes. Run it with and without a busy-loop process beside it
(``python -c 'while True: pass' &``) to compare under load.
"""

from __future__ import annotations

import argparse
import json
import time

from stateguard.llm.local import LlamaCppModel
from stateguard.llm.messages import ChatMessage

SYSTEM = ChatMessage(role="system", content="You are a careful data analyst. " * 150)
PROMPT = [
    SYSTEM,
    ChatMessage(
        role="user",
        content=(
            "Write a short thought and one python block that loads data/orders.csv with "
            "pandas, adds a column net_revenue = units * unit_price * (1 - discount), "
            "groups by region and prints the largest total."
        ),
    ),
]
OTHER = [
    SYSTEM,
    ChatMessage(role="user", content="In two sentences: when is a median better than a mean?"),
]


def _first_difference(a: str, b: str) -> int | None:
    at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), None)
    return at if at is not None or len(a) == len(b) else min(len(a), len(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=120)
    modes = ["aligned", "all"]
    parser.add_argument("--reuse", nargs="+", choices=modes, default=modes)
    args = parser.parse_args()
    for mode in args.reuse:
        model = LlamaCppModel(reproducible=mode == "aligned")
        replies = []
        for i in range(args.repeats):
            if i and i % 2 == 0:
                model.complete(OTHER, max_tokens=args.tokens // 2, temperature=0.0)
            started = time.monotonic()
            reply = model.complete(PROMPT, max_tokens=args.tokens, temperature=0.0)
            replies.append((reply, time.monotonic() - started))
        first = replies[0][0].content
        for i, (reply, seconds) in enumerate(replies):
            row = {"reuse": mode, "call": i, "chars": len(reply.content)}
            row |= {"same_as_first": reply.content == first}
            row |= {"first_difference_at": _first_difference(first, reply.content)}
            row |= {"cached_prompt_tokens": reply.usage.cached_prompt_tokens}
            print(json.dumps(row | {"seconds": round(seconds, 1)}), flush=True)
        del model


if __name__ == "__main__":
    main()
