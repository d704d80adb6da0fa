"""Opt-in smoke test of the embedded llama.cpp backend with a real GGUF model.

Runs only when ``llama_cpp`` is importable and a model is available: either
``STATEGUARD_MODEL_PATH`` points to a GGUF file, or the default model has
already been assembled and verified in the cache.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from stateguard.llm import ChatMessage, LlamaCppModel, UsageMeter
from stateguard.llm.model_files import (
    DEFAULT_MODEL_FILENAME,
    DEFAULT_MODEL_SHA256,
    default_cache_dir,
    is_verified,
)


def _model_path() -> Path | None:
    env = os.environ.get("STATEGUARD_MODEL_PATH")
    if env:
        return Path(env) if Path(env).is_file() else None
    path = default_cache_dir() / DEFAULT_MODEL_FILENAME
    return path if is_verified(path, DEFAULT_MODEL_SHA256) else None


_HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
_MODEL = _model_path() if _HAVE_LLAMA else None  # may hash the file once (then cached)

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not _HAVE_LLAMA, reason="llama_cpp is not installed"),
    pytest.mark.skipif(_MODEL is None, reason="no GGUF model assembled or configured"),
]


@pytest.fixture(scope="module")
def local_model() -> LlamaCppModel:
    model = LlamaCppModel(_MODEL, n_ctx=2048, seed=1)
    model.load()
    return model


def test_generates_a_short_reply(local_model: LlamaCppModel) -> None:
    meter = UsageMeter()
    local_model.meter = meter
    resp = local_model.complete(
        [ChatMessage.user("Reply with the single word: ready")], max_tokens=8
    )
    assert resp.content.strip()
    assert 0 < resp.usage.completion_tokens <= 8 and resp.usage.prompt_tokens > 0
    assert meter.calls == 1 and not resp.usage.estimated


def test_schema_constrained_json_reply(local_model: LlamaCppModel) -> None:
    schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["rerun", "keep", "ask"]},
            "reason": {"type": "string", "maxLength": 80},
        },
        "required": ["action", "reason"],
    }
    resp = local_model.complete(
        [
            ChatMessage.system("You decide whether a stale analysis result must be recomputed."),
            ChatMessage.user("The input table changed after the mean was computed. Decide."),
        ],
        max_tokens=80,
        json_schema=schema,
    )
    data = json.loads(resp.content)
    assert data["action"] in {"rerun", "keep", "ask"}
    assert isinstance(data["reason"], str)


def test_one_prompt_gives_one_greedy_reply_whatever_the_cache_held(
    local_model: LlamaCppModel,
) -> None:
    system = ChatMessage.system("You are a careful data analyst. " * 40)
    prompt = [system, ChatMessage.user("Write three sentences on why a join can lose rows.")]
    other = [system, ChatMessage.user("Name two uses of a median.")]
    first = local_model.complete(prompt, max_tokens=90).content
    again = local_model.complete(prompt, max_tokens=90).content  # whole prompt cached
    local_model.complete(other, max_tokens=20)
    after_other = local_model.complete(prompt, max_tokens=90).content  # system cached
    assert first == again == after_other
