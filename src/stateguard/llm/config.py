"""Model configuration: layered loading (CLI > file > environment > defaults) and construction."""

from __future__ import annotations

import importlib.util
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from stateguard.errors import ModelError
from stateguard.kernel.env import register_secret
from stateguard.llm.base import ChatModel, UsageMeter
from stateguard.llm.local import LLAMA_CPP_INSTALL_HINT, LlamaCppModel
from stateguard.llm.openai_model import OpenAIChatModel
from stateguard.llm.scripted import ScriptedModel

Backend = Literal["openai", "local", "scripted"]
DEFAULT_CONFIG_FILE = Path("stateguard.toml")
CONFIG_SECTION = "llm"

# Environment variables per field, highest priority first.
ENV_VARS: dict[str, tuple[str, ...]] = {
    "backend": ("STATEGUARD_BACKEND",),
    "base_url": ("STATEGUARD_BASE_URL", "OPENAI_BASE_URL"),
    "model": ("STATEGUARD_MODEL", "OPENAI_MODEL"),
    "api_key": ("STATEGUARD_API_KEY", "OPENAI_API_KEY"),
    "model_path": ("STATEGUARD_MODEL_PATH",),
}
_PATH_FIELDS = ("model_path", "cache_dir", "script_path")


class ModelConfig(BaseModel):
    """Everything needed to build a chat model.

    ``temperature`` and ``max_tokens`` are the defaults callers should pass to
    ``complete``; the other fields configure the backend. ``backend=None``
    means "choose automatically" (see :func:`resolve_backend`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Backend | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    model_path: Path | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    seed: int | None = None
    n_ctx: int = Field(default=8192, gt=0)
    n_threads: int | None = Field(default=None, gt=0)
    cache_dir: Path | None = None
    script_path: Path | None = None


def load_model_config(
    cli_overrides: Mapping[str, Any] | None = None,
    config_file: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    auto_backend: bool = True,
) -> ModelConfig:
    """Merge CLI flags > config file > environment > defaults into a ModelConfig.

    ``cli_overrides`` keys are ModelConfig field names; None values mean "not
    given". ``config_file`` may be TOML or YAML with an ``[llm]`` section;
    when None, ``./stateguard.toml`` is used if it exists. Relative paths in
    the file are resolved against the file's directory. With
    ``auto_backend`` an unset backend is resolved (or ModelError raised).
    """
    env = os.environ if environ is None else environ
    layers: list[tuple[str, dict[str, Any]]] = [("environment", _from_env(env))]
    if config_file is None and DEFAULT_CONFIG_FILE.is_file():
        config_file = DEFAULT_CONFIG_FILE
    if config_file is not None:
        layers.append((f"config file {config_file}", _from_file(Path(config_file))))
    cli = {k: v for k, v in (cli_overrides or {}).items() if v is not None}
    layers.append(("command line", cli))

    merged: dict[str, Any] = {}
    source: dict[str, str] = {}
    for where, values in layers:
        for key, value in values.items():
            if key not in ModelConfig.model_fields:
                raise ModelError(f"unknown model setting {key!r} in {where}")
            merged[key], source[key] = value, where
    try:
        config = ModelConfig.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))} (from "
            f"{source.get(str(e['loc'][0]) if e['loc'] else '', 'defaults')}): {e['msg']}"
            for e in exc.errors()
        )
        raise ModelError(f"invalid model configuration: {problems}") from exc
    if auto_backend and config.backend is None:
        config = config.model_copy(update={"backend": resolve_backend(config)})
    return config


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field, names in ENV_VARS.items():
        for name in names:
            if env.get(name):
                values[field] = env[name]
                break
    return values


def _from_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ModelError(f"config file {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ModelError(f"cannot read config file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelError(f"config file {path} must contain a mapping at top level")
    section = data.get(CONFIG_SECTION, {})
    if not isinstance(section, dict):
        raise ModelError(f"config file {path}: [{CONFIG_SECTION}] must be a table/mapping")
    values = dict(section)
    for key in _PATH_FIELDS:
        if isinstance(values.get(key), str):
            p = Path(values[key]).expanduser()
            values[key] = p if p.is_absolute() else path.resolve().parent / p
    return values


def llama_cpp_available() -> bool:
    """True if the embedded backend's library can be imported."""
    return importlib.util.find_spec("llama_cpp") is not None


def resolve_backend(config: ModelConfig) -> Backend:
    """The configured backend, or the automatic choice: base_url -> openai, llama_cpp -> local."""
    if config.backend is not None:
        return config.backend
    if config.base_url:
        return "openai"
    if llama_cpp_available():
        return "local"
    raise ModelError(
        "no chat model is configured and none can be chosen automatically. Either\n"
        "  (1) use an OpenAI-compatible server: set its URL and model name with "
        "--base-url URL --model NAME, or STATEGUARD_BASE_URL=URL STATEGUARD_MODEL=NAME, "
        f"or base_url/model in the [{CONFIG_SECTION}] section of stateguard.toml "
        f"(if the server needs a key: STATEGUARD_API_KEY, or api_key in [{CONFIG_SECTION}]); or\n"
        f"  (2) use the embedded model: {LLAMA_CPP_INSTALL_HINT}"
    )


def build_model(config: ModelConfig, meter: UsageMeter | None = None) -> ChatModel:
    """Construct the backend described by ``config``, recording usage to ``meter``."""
    backend = resolve_backend(config)
    if backend == "openai":
        if not config.model:
            raise ModelError(
                f"the openai backend needs a model name (server {config.base_url or 'default'}): "
                "pass --model NAME or set STATEGUARD_MODEL"
            )
        if config.api_key is not None:
            register_secret(config.api_key.get_secret_value())  # redacted from our records
        return OpenAIChatModel(
            config.model,
            base_url=config.base_url,
            api_key=config.api_key.get_secret_value() if config.api_key else None,
            timeout=config.timeout,
            max_retries=config.max_retries,
            seed=config.seed,
            meter=meter,
        )
    if backend == "local":
        return LlamaCppModel(
            config.model_path,
            n_ctx=config.n_ctx,
            n_threads=config.n_threads,
            seed=config.seed if config.seed is not None else 0,
            cache_dir=config.cache_dir,
            meter=meter,
        )
    return ScriptedModel(_load_script(config.script_path), meter=meter)


def _load_script(path: Path | None) -> list[str]:
    if path is None:
        raise ModelError("the scripted backend needs script_path: a JSON or YAML list of replies")
    try:
        text = path.read_text(encoding="utf-8")
        is_yaml = path.suffix.lower() in (".yaml", ".yml")
        data = yaml.safe_load(text) if is_yaml else json.loads(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ModelError(f"cannot read scripted replies from {path}: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise ModelError(f"scripted replies file {path} must hold a list of strings")
    return data
