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


def test_samples_of_one_prompt_get_different_seeds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With one fixed seed every sample of a prompt would be the same text."""
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=_FakeLlama))
    _FakeLlama.calls = []
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"GGUF")
    model = LlamaCppModel(weights, seed=5)
    prompt = [ChatMessage.user("hi")]
    model.complete(prompt, temperature=0.0)
    model.complete(prompt, temperature=0.7)
    model.complete(prompt, temperature=0.7)
    model.complete(prompt, temperature=0.0)
    assert [c["seed"] for c in _FakeLlama.calls] == [5, 5, 6, 7]
    again = LlamaCppModel(weights, seed=5)  # reproducible: the same sequence
    _FakeLlama.calls = []
    again.complete(prompt, temperature=0.7)
    again.complete(prompt, temperature=0.7)
    assert [c["seed"] for c in _FakeLlama.calls] == [5, 6]
