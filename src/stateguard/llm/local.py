"""Embedded backend: a GGUF model run in-process by llama-cpp-python."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stateguard.errors import ModelError
from stateguard.llm.aligned_cache import AlignedCache
from stateguard.llm.base import UsageMeter
from stateguard.llm.limits import ReplyCut, ReplyWatch
from stateguard.llm.messages import ChatMessage, ChatResponse, Usage, estimate_tokens
from stateguard.llm.model_files import default_model_path

LLAMA_CPP_INSTALL_HINT = (
    "pip install 'stateguard[local]'  (this builds llama-cpp-python from source, which takes "
    "several minutes; on x86-64, CMAKE_ARGS='-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF "
    "-DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON' pip install 'stateguard[local]' is faster "
    "and avoids a native build that can crash on virtual CPUs advertising AMX)"
)


THOUGHT_CHARS = 200
"""Longest thought line the step grammar allows (characters)."""
CODE_CHARS = 300
"""Longest code line the step grammar allows (characters)."""
CODE_LINES = 60
"""Most code lines the step grammar allows in one block."""
ANSWER_CHARS = 2000
"""Longest answer the step grammar allows (characters, one line)."""

STEP_GRAMMAR = rf"""
root    ::= step | answer
step    ::= thought "```python\n" code "```"
answer  ::= thought? "<answer>" [^<\n]{{1,{ANSWER_CHARS}}} "</answer>"
thought ::= fline tline? tline?
fline   ::= [^`<\n\[] [^<\n]{{0,{THOUGHT_CHARS - 1}}} "\n" "\n"?
tline   ::= [^`<\n] [^<\n]{{0,{THOUGHT_CHARS - 1}}} "\n" "\n"?
code    ::= cline line{{0,{CODE_LINES - 1}}}
line    ::= cline | blank cline
cline   ::= [^`\n] [^`\n]{{0,{CODE_CHARS - 1}}} "\n"
blank   ::= "\n"
"""
"""GBNF grammar of one worker step: a thought of one to three lines of at most
`THOUGHT_CHARS` characters, then one ```python block of at most `CODE_LINES` lines of
at most `CODE_CHARS` characters (no code line holds a backtick, so the block ends at its
closing fence, on a line of its own; blank lines come one at a time); or an answer on
one line in ``<answer>`` tags, after an optional thought. Every reply it allows is
bounded. Pass it as ``complete(..., grammar=STEP_GRAMMAR)``."""

UNBOUNDED_STEP_GRAMMAR = r"""
root    ::= step | answer
step    ::= thought "```python\n" code "```"
answer  ::= thought? "<answer>" [^<\n]+ "</answer>"
thought ::= fline tline? tline?
fline   ::= [^`<\n\[] [^<\n]* "\n" "\n"?
tline   ::= [^`<\n] [^<\n]* "\n" "\n"?
code    ::= cline line*
line    ::= cline | blank cline
cline   ::= [^`\n] [^`\n]* "\n"
blank   ::= "\n"
"""
"""The step grammar without length bounds (for measuring what the bounds cost)."""

CODE_STEP_GRAMMAR = STEP_GRAMMAR.replace("root    ::= step | answer", "root    ::= step")
"""`STEP_GRAMMAR` without the answer: a thought and one python block (for a step before
any code ran, when an answer would be refused)."""

ANSWER_STEP_GRAMMAR = STEP_GRAMMAR.replace("root    ::= step | answer", "root    ::= answer")
"""`STEP_GRAMMAR` without the code block: an optional thought and the answer (for the one
last reply a stalled turn gets before it ends)."""


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix: the prompt tokens llama.cpp could reuse from its cache."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def import_llama_cpp() -> Any:
    """Import ``llama_cpp`` or raise ModelError saying exactly what to install."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise ModelError(
            f"the embedded backend needs llama-cpp-python, which is not importable ({exc}). "
            f"Install it with: {LLAMA_CPP_INSTALL_HINT}"
        ) from exc


class LlamaCppModel:
    """Chat model running a local GGUF file with llama.cpp, using the model's chat template.

    ``llama_cpp`` is imported when the object is created; the weights are
    loaded on the first call (or by :meth:`load`). With ``model_path=None``
    the default model is assembled/verified in the cache on load. Calls are
    serialised: one llama.cpp context is not safe to use from two threads.
    ``json_schema`` becomes a grammar that constrains sampling to JSON of
    that schema. Sampling (temperature > 0) seeds each call from its prompt: ``seed`` plus
    a digest of the messages and temperature, plus ``k`` for the k-th sample of that
    prompt in a row (from 0). A sample then depends only on its prompt and its place among
    the samples of that prompt, not on what the process sampled before (another run in the
    same process, another manager); and two samples of one prompt differ (with one fixed
    seed they would be the same text, which defeats resampling). A sample is drawn from the
    temperature-scaled distribution within ``top_p`` (0.95), with ``top_k`` and ``min_p``
    off by default: llama.cpp's own defaults (``top_k=40``, ``min_p=0.05``) keep a single
    token wherever the model is confident, so a reply the model has locked onto comes back
    token for token at any temperature (measured on a 303-token reply the worker had
    re-sent: 3 of 3 samples at 0.7 identical with those defaults, 0 of 3 without).
    ``grammar`` (GBNF text, e.g. `STEP_GRAMMAR`) constrains one call's reply; it is
    compiled once per text with ``llama_cpp.LlamaGrammar``.
    With ``reproducible=True`` (the default) a prompt reuses the KV cache only in whole,
    aligned batches (`stateguard.llm.aligned_cache`), so one prompt gives one greedy
    reply whatever the process evaluated before; ``False`` reuses every cached token
    (faster, but the reply may change with the cache's history).
    """

    supports_grammar = True
    """``complete`` takes ``grammar=`` (GBNF); callers check this before passing it."""

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        meter: UsageMeter | None = None,
        name: str | None = None,
        cache_dir: Path | None = None,
        verbose: bool = False,
        reproducible: bool = True,
        top_p: float = 0.95,
        top_k: int = 0,
        min_p: float = 0.0,
    ) -> None:
        """Configure the backend; raises ModelError at once if llama_cpp is missing.

        ``top_p``, ``top_k`` (0: off) and ``min_p`` (0: off) bound sampling (temperature >
        0); greedy decoding ignores them."""
        self._llama_cpp = import_llama_cpp()
        self.model_path = Path(model_path).expanduser() if model_path is not None else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.seed = seed
        self.meter = meter
        self.cache_dir = cache_dir
        self.verbose = verbose
        self.reproducible = reproducible
        self.sampling = {"top_p": top_p, "top_k": top_k, "min_p": min_p}
        self.name = name or (
            f"llama.cpp:{self.model_path.name}" if self.model_path else "llama.cpp:default"
        )
        self._llm: Any = None
        self._lock = threading.Lock()
        self._last_sampled = ""
        """The digest of the last sampled prompt (`_sample_seed`)."""
        self._repeats = 0
        """How many samples of that prompt came before the current one, in a row."""
        self._grammars: dict[str, Any] = {}
        self._cache: AlignedCache | None = None

    def load(self) -> None:
        """Resolve the model file and load the weights (idempotent)."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if self._llm is not None:
            return
        if self.model_path is None:
            self.model_path = default_model_path(self.cache_dir)
        if not self.model_path.is_file():
            raise ModelError(f"GGUF model file {self.model_path} does not exist")
        try:
            self._llm = self._llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                verbose=self.verbose,
            )
        except Exception as exc:  # llama.cpp raises ValueError/RuntimeError on bad files
            raise ModelError(f"llama.cpp could not load {self.model_path}: {exc}") from exc
        if self.reproducible:
            self._cache = AlignedCache.attach(self._llm)

    def _evaluated(self) -> list[int]:
        """The tokens in the context's KV cache now (the last prompt and its reply)."""
        llm = self._llm
        try:
            return [int(t) for t in llm.input_ids[: llm.n_tokens]]
        except (AttributeError, TypeError):  # another llama-cpp-python layout: unknown
            return []

    def _compiled(self, grammar: str) -> Any:
        """``grammar`` as a LlamaGrammar (cached); a bad grammar raises ModelError."""
        if grammar not in self._grammars:
            try:
                self._grammars[grammar] = self._llama_cpp.LlamaGrammar.from_string(
                    grammar, verbose=self.verbose
                )
            except Exception as exc:  # llama.cpp raises ValueError on a grammar it cannot parse
                raise ModelError(f"llama.cpp could not parse the grammar: {exc}") from exc
        return self._grammars[grammar]

    def _sample_seed(self, messages: list[dict[str, str]], temperature: float) -> int:
        """The seed of one call: ``seed`` for greedy decoding; for sampling, ``seed`` plus
        the prompt's digest plus the number of samples of this prompt just before it."""
        if temperature <= 0:
            return self.seed
        digest = hashlib.sha256(
            json.dumps([messages, temperature], sort_keys=True).encode("utf-8")
        ).hexdigest()
        self._repeats = self._repeats + 1 if digest == self._last_sampled else 0
        self._last_sampled = digest
        return (self.seed + int(digest[:8], 16) + self._repeats) % 2**31

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        json_schema: dict | None = None,
        grammar: str | None = None,
        seconds: float | None = None,
        cut: ReplyCut | None = None,
    ) -> ChatResponse:
        """Generate a reply in-process; temperature 0 is greedy decoding.

        ``grammar`` is ignored when ``json_schema`` is given (that becomes the grammar).
        ``seconds`` and ``cut`` bound the call: generation stops when the call has run
        ``seconds`` (``finish_reason="time"``), or when the reply writes an overlong line
        or one of the system's markers (``"line"``/``"marker"``, the reply cut there, see
        `stateguard.llm.limits`); ``max_tokens`` ends it with ``"length"``."""
        start = time.perf_counter()
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stop": list(stop) if stop else [],
        }
        if temperature > 0:
            kwargs.update(self.sampling)
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        watched = seconds is not None or cut is not None
        with self._lock:
            if grammar is not None and json_schema is None:
                kwargs["grammar"] = self._compiled(grammar)
            kwargs["seed"] = self._sample_seed(kwargs["messages"], temperature)
            self._load_locked()
            before = self._evaluated()
            if self._cache is not None:
                self._cache.expect_prompt()
            try:
                if watched:
                    content, finish, usage = self._watched(kwargs, start, seconds, cut)
                else:
                    content, finish, usage = self._whole(kwargs)
            except ModelError:
                raise
            except Exception as exc:  # e.g. prompt longer than n_ctx, bad grammar
                raise ModelError(
                    f"llama.cpp generation with {self.model_path} failed: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            finally:
                if self._cache is not None:
                    self._cache.done()
            cached = _common_prefix(before, self._evaluated()[: usage.prompt_tokens])
            if self._cache is not None:
                cached = min(cached, self._cache.kept)
        response = ChatResponse(
            content=content,
            usage=usage.model_copy(update={"cached_prompt_tokens": cached}),
            model=self.name,
            wall_time=time.perf_counter() - start,
            finish_reason=finish,
        )
        if self.meter is not None:
            self.meter.record(response)
        return response

    def _whole(self, kwargs: dict[str, Any]) -> tuple[str, str | None, Usage]:
        """One generation, returned whole: (content, finish reason, usage)."""
        result = self._llm.create_chat_completion(**kwargs)
        choice = result["choices"][0]
        raw = result.get("usage") or {}
        usage = Usage(
            prompt_tokens=raw.get("prompt_tokens", 0),
            completion_tokens=raw.get("completion_tokens", 0),
            estimated=not raw,
        )
        return choice["message"].get("content") or "", choice.get("finish_reason"), usage

    def _watched(
        self, kwargs: dict[str, Any], start: float, seconds: float | None, cut: ReplyCut | None
    ) -> tuple[str, str | None, Usage]:
        """One streamed generation, stopped at the first bound it reaches (see `complete`)."""
        watch = ReplyWatch(cut) if cut is not None else None
        pieces: list[str] = []
        finish: str | None = None
        stream = self._llm.create_chat_completion(stream=True, **kwargs)
        try:
            for chunk in stream:
                choice = chunk["choices"][0]
                piece = (choice.get("delta") or {}).get("content") or ""
                if piece:
                    pieces.append(piece)
                    if watch is not None and (reason := watch.feed(piece)) is not None:
                        finish = reason
                        break
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
                    break
                if seconds is not None and time.perf_counter() - start >= seconds:
                    finish = "time"
                    break
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        content = watch.text if watch is not None and watch.reason is not None else "".join(pieces)
        generated = self._count_tokens("".join(pieces))
        prompt = max(0, int(getattr(self._llm, "n_tokens", 0)) - generated)
        return content, finish, Usage(prompt_tokens=prompt, completion_tokens=generated)

    def _count_tokens(self, text: str) -> int:
        if not text:
            return 0
        try:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        except Exception:  # another llama-cpp-python layout: estimate
            return estimate_tokens(text)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary (the weights are loaded if needed)."""
        with self._lock:
            self._load_locked()
            return self._count_tokens(text)
