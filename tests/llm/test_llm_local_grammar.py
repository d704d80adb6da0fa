"""The step grammar of the embedded backend: passed to llama.cpp, compiled once, obeyed.

The first tests use a stand-in for the ``llama_cpp`` module; the others need the real
llama.cpp (skipped with a reason where it is not installed), the last one also the
embedded model (``local_model``, opt-in).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from stateguard.errors import ModelError
from stateguard.llm import ChatMessage
from stateguard.llm.local import (
    ANSWER_STEP_GRAMMAR,
    CODE_STEP_GRAMMAR,
    STEP_GRAMMAR,
    LlamaCppModel,
)
from stateguard.llm.model_files import DEFAULT_MODEL_FILENAME, default_cache_dir
from stateguard.worker.parsing import parse_reply

_HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(
    not _HAVE_LLAMA, reason="llama_cpp is not installed (pip install 'stateguard[local]')"
)


class _FakeGrammar:
    compiled: ClassVar[list[str]] = []

    def __init__(self, text: str) -> None:
        self.text = text

    @classmethod
    def from_string(cls, text: str, verbose: bool = True) -> _FakeGrammar:
        if "::=" not in text:
            raise ValueError("no rule")
        cls.compiled.append(text)
        return cls(text)


class _FakeLlama:
    calls: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        _FakeLlama.calls.append(kwargs)
        return {
            "choices": [{"message": {"content": "<answer>1</answer>"}, "finish_reason": "stop"}]
        }


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> LlamaCppModel:
    fake = types.SimpleNamespace(Llama=_FakeLlama, LlamaGrammar=_FakeGrammar)
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    _FakeLlama.calls, _FakeGrammar.compiled = [], []
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    return LlamaCppModel(weights)


def test_the_grammar_goes_to_llama_cpp_compiled_once(fake_model: LlamaCppModel) -> None:
    prompt = [ChatMessage.user("hi")]
    fake_model.complete(prompt, grammar=STEP_GRAMMAR)
    fake_model.complete(prompt, grammar=STEP_GRAMMAR)
    fake_model.complete(prompt)
    grammars = [c.get("grammar") for c in _FakeLlama.calls]
    assert [g.text if g else None for g in grammars] == [STEP_GRAMMAR, STEP_GRAMMAR, None]
    assert _FakeGrammar.compiled == [STEP_GRAMMAR]


def test_a_json_schema_takes_precedence(fake_model: LlamaCppModel) -> None:
    fake_model.complete([ChatMessage.user("hi")], grammar=STEP_GRAMMAR, json_schema={})
    assert "grammar" not in _FakeLlama.calls[0] and "response_format" in _FakeLlama.calls[0]


def test_a_bad_grammar_is_a_model_error(fake_model: LlamaCppModel) -> None:
    with pytest.raises(ModelError, match="could not parse the grammar"):
        fake_model.complete([ChatMessage.user("hi")], grammar="not a grammar")


@needs_llama
def test_llama_cpp_parses_the_step_grammar() -> None:
    import llama_cpp  # the optional extra

    for grammar in (STEP_GRAMMAR, CODE_STEP_GRAMMAR, ANSWER_STEP_GRAMMAR):
        assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None
    assert "answer" not in CODE_STEP_GRAMMAR.split("\n")[1]
    assert "step" not in ANSWER_STEP_GRAMMAR.split("\n")[1]


def _model_path() -> Path | None:
    env = os.environ.get("STATEGUARD_MODEL_PATH")
    path = Path(env) if env else default_cache_dir() / DEFAULT_MODEL_FILENAME
    return path if path.is_file() else None


@pytest.mark.local_model
@needs_llama
@pytest.mark.skipif(_model_path() is None, reason="no GGUF model assembled or configured")
def test_constrained_replies_are_valid_steps() -> None:
    model = LlamaCppModel(_model_path(), n_ctx=2048, seed=3)
    system = (
        "You analyse data in a Python session. Each step: a short thought, then one ```python "
        "code block. When the result is shown, answer inside <answer></answer>."
    )
    asks = [
        "Question: load data/orders.csv with pandas and show its columns. Write "
        "several code blocks, one per idea, and explain each.",
        "Question: what is 2 + 2? Output:\n4\nGive the final answer.",
    ]
    for ask in asks:
        for temperature in (0.0, 0.9):
            reply = model.complete(
                [ChatMessage.system(system), ChatMessage.user(ask)],
                max_tokens=300,
                temperature=temperature,
                grammar=STEP_GRAMMAR,
            )
            parsed = parse_reply(reply.content, code_ran=True)
            if reply.finish_reason != "length":
                assert parsed.problem is None, reply.content
