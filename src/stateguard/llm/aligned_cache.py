"""Reproducible prompt-cache reuse for llama.cpp: reuse only whole, aligned batches.

llama.cpp evaluates a prompt in batches of ``n_batch`` tokens. The floating-point
result for one token depends on the batch it was evaluated in (its size and where it
starts), so a prompt whose cached prefix ends mid-batch, or whose last token is
re-evaluated alone to refresh the logits, gets slightly different logits than the
same prompt evaluated from an empty cache. At temperature 0 that is enough to change
the greedy reply a few hundred characters in, and so the answers of a run depend on
what the process happened to evaluate before.

`AlignedCache` wraps one ``llama_cpp.Llama``'s ``eval`` so that a prompt reuses the
cache only up to a multiple of ``n_batch`` that was itself evaluated as a whole batch
starting at a multiple of ``n_batch``; the rest is evaluated again in batches that
start where a fresh evaluation's would. Every prompt token is then computed in the
same batch as in a fresh evaluation, and generated tokens (one per batch) likewise,
so one prompt gives one greedy reply whatever came before it. The cost is re-evaluating
at most ``n_batch - 1`` cached tokens per call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class AlignedCache:
    """Route a Llama's prompt evaluation through aligned, whole-batch cache reuse.

    Call `expect_prompt` right before each generation: the next ``eval`` is that
    generation's prompt (llama-cpp-python evaluates the uncached prompt suffix first,
    then one token per step)."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self._eval: Callable[[Sequence[int]], None] = llm.eval
        self._batch = int(llm.n_batch)
        self._trusted = 0
        """Cached tokens computed in whole batches that start at multiples of n_batch."""
        self._prompt_next = False
        self.kept = 0
        """Cached tokens the last prompt reused."""
        self.reevaluated = 0
        """Cached tokens the last prompt evaluated again (reuse cut back to `kept`)."""
        llm.eval = self.eval

    @classmethod
    def attach(cls, llm: Any) -> AlignedCache | None:
        """Wrap ``llm``, or None when it lacks llama-cpp-python's ``eval``, ``n_batch``
        and ``input_ids`` (another layout: its own reuse is left alone)."""
        if not all(hasattr(llm, name) for name in ("eval", "n_batch", "input_ids", "n_tokens")):
            return None
        return cls(llm)

    def expect_prompt(self) -> None:
        """The next ``eval`` evaluates a prompt (not a generated token)."""
        self._prompt_next = True

    def done(self) -> None:
        """The generation ended (also when it failed before evaluating its prompt)."""
        self._prompt_next = False

    def eval(self, tokens: Sequence[int]) -> None:
        """``Llama.eval``, with a prompt's reuse cut back to a trusted aligned prefix."""
        llm = self._llm
        if not self._prompt_next:
            self._eval(tokens)
            return
        self._prompt_next = False
        cached = int(llm.n_tokens)
        keep = min(cached, self._trusted) // self._batch * self._batch
        if keep == cached and not tokens and cached:  # all cached: refresh the last batch
            keep = (cached - 1) // self._batch * self._batch
        self.kept, self.reevaluated = keep, cached - keep
        if keep < cached:
            tokens = [int(t) for t in llm.input_ids[keep:cached]] + list(tokens)
            llm.n_tokens = keep
        self._trusted = min(self._trusted, keep)
        self._eval(tokens)
        self._trusted = int(llm.n_tokens) // self._batch * self._batch
