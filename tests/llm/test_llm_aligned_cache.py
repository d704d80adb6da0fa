"""Aligned prompt-cache reuse: every prompt token is computed in the batch a fresh
evaluation would compute it in, whatever the cache held before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stateguard.llm.aligned_cache import AlignedCache

BATCH = 8


class FakeLlama:
    """llama-cpp-python's cache bookkeeping (``generate``'s prefix reuse, ``eval`` in
    batches of ``n_batch``), recording for each cache position the batch that computed
    it: (start, length, every token up to the batch's end). Two positions with equal
    records hold bit-identical values in llama.cpp."""

    def __init__(self) -> None:
        self.n_batch = BATCH
        self.n_tokens = 0
        self.input_ids: list[int] = [0] * 10_000
        self.computed: list[tuple[int, int, tuple[int, ...]]] = [(0, 0, ())] * 10_000

    def eval(self, tokens: list[int]) -> None:
        tokens = list(tokens)
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i : i + self.n_batch]
            start = self.n_tokens
            self.input_ids[start : start + len(batch)] = batch
            record = (start, len(batch), tuple(self.input_ids[: start + len(batch)]))
            self.computed[start : start + len(batch)] = [record] * len(batch)
            self.n_tokens += len(batch)

    def generate(self, prompt: list[int], reply: list[int], cache: AlignedCache | None) -> None:
        """The prompt's prefix reuse as llama-cpp-python does it, then ``reply`` one by one."""
        if cache is not None:
            cache.expect_prompt()
        cached = self.input_ids[: self.n_tokens]
        common = 0
        for a, b in zip(cached, prompt, strict=False):
            if a != b:
                break
            common += 1
        if self.n_tokens == len(prompt) == common:
            suffix: list[int] = []
        else:
            reuse = common - 1 if common == len(prompt) else common
            self.n_tokens = max(reuse, 0)
            suffix = prompt[self.n_tokens :]
        self.eval(suffix)
        for token in reply:
            self.eval([token])
        if cache is not None:
            cache.done()


def fresh_records(prompt: list[int]) -> list[tuple[int, int, tuple[int, ...]]]:
    llm = FakeLlama()
    llm.eval(prompt)
    return llm.computed[: len(prompt)]


prompts = st.lists(
    st.tuples(st.integers(0, 40), st.lists(st.integers(1, 3), min_size=1, max_size=30)),
    min_size=1,
    max_size=6,
)


def _session(steps: list[tuple[int, list[int]]]) -> list[tuple[list[int], list[int]]]:
    """Prompts that extend or branch off the previous prompt and its reply, as a turn's do."""
    out: list[tuple[list[int], list[int]]] = []
    history: list[int] = [9] * 5
    for keep, new in steps:
        prompt = history[: max(1, min(keep, len(history)))] + new
        reply = [7, 8, 7][: 1 + keep % 3]
        out.append((prompt, reply))
        history = prompt + reply
    return out


@settings(max_examples=300, deadline=None)
@given(prompts)
def test_every_prompt_token_is_computed_as_in_a_fresh_evaluation(steps):
    llm = FakeLlama()
    cache = AlignedCache(llm)
    for prompt, reply in _session(steps):
        llm.generate(prompt, reply, cache)
        assert llm.computed[: len(prompt)] == fresh_records(prompt)


def test_llama_cpp_own_reuse_computes_differently_and_the_cache_prevents_it():
    prompt, reply = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [5, 6]
    plain = FakeLlama()
    plain.generate(prompt, reply, None)
    plain.generate(prompt, reply, None)  # the last prompt token is evaluated alone
    assert plain.computed[: len(prompt)] != fresh_records(prompt)
    llm = FakeLlama()
    cache = AlignedCache(llm)
    llm.generate(prompt, reply, cache)
    llm.generate(prompt, reply, cache)
    assert llm.computed[: len(prompt)] == fresh_records(prompt)
    # llama-cpp-python keeps all but the last prompt token; the cache keeps one whole batch
    assert cache.kept == BATCH and cache.reevaluated == len(prompt) - 1 - BATCH


def test_generated_tokens_are_never_reused_as_prompt():
    llm = FakeLlama()
    cache = AlignedCache(llm)
    llm.generate([1] * 6, [2] * 12, cache)  # reply tokens fill positions 6..17
    follow = [1] * 6 + [2] * 12 + [3, 3]
    llm.generate(follow, [], cache)
    assert cache.kept == 0  # no whole batch of the cache was evaluated as a prompt
    assert llm.computed[: len(follow)] == fresh_records(follow)
