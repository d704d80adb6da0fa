"""LlamaCppModel's sampling seeds, against a stand-in for the llama_cpp module."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from stateguard.llm import ChatMessage
from stateguard.llm.local import LlamaCppModel


class _FakeLlama:
    calls: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        _FakeLlama.calls.append(kwargs)
        return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}


def test_samples_of_one_prompt_get_different_seeds_that_depend_on_the_prompt_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With one fixed seed every sample of a prompt would be the same text; with a
    process-wide counter a sample would depend on what the process sampled before."""
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=_FakeLlama))
    _FakeLlama.calls = []
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    model = LlamaCppModel(weights, seed=5)
    prompt, other = [ChatMessage.user("hi")], [ChatMessage.user("ho")]
    model.complete(prompt, temperature=0.0)
    model.complete(prompt, temperature=0.7)
    model.complete(prompt, temperature=0.7)
    model.complete(prompt, temperature=0.0)
    seeds = [c["seed"] for c in _FakeLlama.calls]
    assert seeds[0] == seeds[3] == 5  # greedy: the seed does not matter
    assert seeds[2] == seeds[1] + 1 and seeds[1] != 5  # two samples differ
    # a fresh process, or one that sampled another prompt first: the same seeds
    again = LlamaCppModel(weights, seed=5)
    _FakeLlama.calls = []
    again.complete(other, temperature=0.7)
    again.complete(prompt, temperature=0.7)
    again.complete(prompt, temperature=0.7)
    later = [c["seed"] for c in _FakeLlama.calls]
    assert later[1:] == seeds[1:3] and later[0] not in seeds
    # another temperature is another prompt
    _FakeLlama.calls = []
    again.complete(prompt, temperature=0.9)
    assert _FakeLlama.calls[0]["seed"] not in seeds


def test_sampling_is_not_narrowed_to_one_token_by_top_k_or_min_p(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """llama.cpp's defaults (top_k 40, min_p 0.05) keep one token wherever the model is
    confident: resampling a reply the model locked onto gives it back token for token."""
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=_FakeLlama))
    _FakeLlama.calls = []
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    model = LlamaCppModel(weights)
    model.complete([ChatMessage.user("hi")], temperature=0.7)
    model.complete([ChatMessage.user("hi")], temperature=0.0)
    sampled, greedy = _FakeLlama.calls
    assert (sampled["top_k"], sampled["min_p"], sampled["top_p"]) == (0, 0.0, 0.95)
    assert "min_p" not in greedy and "top_k" not in greedy  # greedy decoding: untouched
    custom = LlamaCppModel(weights, top_k=40, min_p=0.05)
    custom.complete([ChatMessage.user("hi")], temperature=0.7)
    assert (_FakeLlama.calls[-1]["top_k"], _FakeLlama.calls[-1]["min_p"]) == (40, 0.05)
