"""Chat models: one small protocol with OpenAI-compatible, embedded llama.cpp and scripted backends.

The scripted backend ships in the library as the test double for code that
talks to a model. Nothing here imports ``llama_cpp`` until an embedded model
is constructed.
"""

from stateguard.llm.base import ChatModel, MeterSnapshot, UsageMeter
from stateguard.llm.config import ModelConfig, build_model, load_model_config, resolve_backend
from stateguard.llm.local import LlamaCppModel
from stateguard.llm.messages import ChatMessage, ChatResponse, Usage
from stateguard.llm.model_files import DEFAULT_MODEL_SHA256, default_model_path
from stateguard.llm.openai_model import OpenAIChatModel
from stateguard.llm.scripted import ScriptedModel, ScriptedRequest

__all__ = [
    "DEFAULT_MODEL_SHA256",
    "ChatMessage",
    "ChatModel",
    "ChatResponse",
    "LlamaCppModel",
    "MeterSnapshot",
    "ModelConfig",
    "OpenAIChatModel",
    "ScriptedModel",
    "ScriptedRequest",
    "Usage",
    "UsageMeter",
    "build_model",
    "default_model_path",
    "load_model_config",
    "resolve_backend",
]
