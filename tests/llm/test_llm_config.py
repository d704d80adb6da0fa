"""Model configuration layering, auto-selection and build_model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stateguard.errors import ModelError
from stateguard.llm import (
    ChatMessage,
    ModelConfig,
    OpenAIChatModel,
    ScriptedModel,
    UsageMeter,
    build_model,
    load_model_config,
    resolve_backend,
)
from stateguard.llm import config as config_mod

ENV = {
    "STATEGUARD_BASE_URL": "http://env-sg/v1",
    "OPENAI_BASE_URL": "http://env-openai/v1",
    "OPENAI_MODEL": "env-model",
    "OPENAI_API_KEY": "env-key",
    "STATEGUARD_MODEL_PATH": "/env/model.gguf",
}


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray ./stateguard.toml


def test_env_layer_and_variable_priority() -> None:
    cfg = load_model_config({}, None, environ=ENV)
    assert cfg.base_url == "http://env-sg/v1"  # STATEGUARD_* wins over OPENAI_*
    assert cfg.model == "env-model"
    assert cfg.api_key is not None and cfg.api_key.get_secret_value() == "env-key"
    assert cfg.model_path == Path("/env/model.gguf")
    assert cfg.backend == "openai"
    assert "env-key" not in repr(cfg)


def test_precedence_cli_over_file_over_env_over_defaults(tmp_path) -> None:
    (tmp_path / "stateguard.toml").write_text(
        '[llm]\nmodel = "file-model"\ntimeout = 9.5\nmodel_path = "models/m.gguf"\n'
        "[other]\nignored = 1\n"
    )
    cfg = load_model_config({"model": "cli-model", "timeout": None}, None, environ=ENV)
    assert cfg.model == "cli-model"  # CLI beats file
    assert cfg.timeout == 9.5  # file beats default; CLI None means unset
    assert cfg.base_url == "http://env-sg/v1"  # env fills what file and CLI lack
    assert cfg.model_path == tmp_path / "models" / "m.gguf"  # relative to the file
    assert cfg.max_retries == 4 and cfg.temperature == 0.0  # defaults


def test_yaml_config_file(tmp_path) -> None:
    path = tmp_path / "conf.yaml"
    path.write_text("llm:\n  backend: openai\n  base_url: http://yaml/v1\n  model: y\n")
    cfg = load_model_config(None, path, environ={})
    assert (cfg.backend, cfg.base_url, cfg.model) == ("openai", "http://yaml/v1", "y")


def test_bad_values_name_their_source(tmp_path) -> None:
    path = tmp_path / "s.toml"
    path.write_text("[llm]\ntemperature = 7\n")
    with pytest.raises(ModelError, match=r"temperature \(from config file .*s\.toml\)"):
        load_model_config({}, path, environ={})
    with pytest.raises(ModelError, match="unknown model setting 'modle' in command line"):
        load_model_config({"modle": "x"}, None, environ={})
    with pytest.raises(ModelError, match="does not exist"):
        load_model_config({}, tmp_path / "missing.toml", environ={})


def test_auto_selection_error_names_both_options(monkeypatch) -> None:
    monkeypatch.setattr(config_mod, "llama_cpp_available", lambda: False)
    with pytest.raises(ModelError) as info:
        load_model_config({}, None, environ={})
    msg = str(info.value)
    assert "--base-url" in msg and "STATEGUARD_BASE_URL" in msg and "STATEGUARD_MODEL" in msg
    assert "pip install 'stateguard[local]'" in msg and "-DGGML_NATIVE=OFF" in msg
    # without auto-selection an unconfigured backend is left open
    assert load_model_config({}, None, environ={}, auto_backend=False).backend is None


def test_auto_selection_prefers_base_url_then_local(monkeypatch) -> None:
    monkeypatch.setattr(config_mod, "llama_cpp_available", lambda: True)
    assert resolve_backend(ModelConfig()) == "local"
    assert resolve_backend(ModelConfig(base_url="http://x/v1")) == "openai"
    assert resolve_backend(ModelConfig(backend="scripted", base_url="http://x/v1")) == "scripted"


def test_build_openai_model_talks_to_server(fake_openai) -> None:
    server = fake_openai(["hello from server"])
    cfg = load_model_config(
        {"base_url": server.base_url, "model": "cfg-model", "api_key": "k"}, None, environ={}
    )
    meter = UsageMeter()
    model = build_model(cfg, meter)
    assert isinstance(model, OpenAIChatModel)
    assert model.complete([ChatMessage.user("hi")]).content == "hello from server"
    assert server.bodies[0]["model"] == "cfg-model" and meter.calls == 1


def test_build_openai_without_model_name_fails() -> None:
    with pytest.raises(ModelError, match="needs a model name"):
        build_model(ModelConfig(backend="openai", base_url="http://x/v1"))


def test_build_scripted_from_file(tmp_path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["r1", "r2"]))
    model = build_model(ModelConfig(backend="scripted", script_path=script))
    assert isinstance(model, ScriptedModel)
    assert [model.complete([ChatMessage.user("q")]).content for _ in range(2)] == ["r1", "r2"]
    with pytest.raises(ModelError, match="needs script_path"):
        build_model(ModelConfig(backend="scripted"))


def test_build_local_without_llama_cpp_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ModelError, match=r"pip install 'stateguard\[local\]'.*CMAKE_ARGS"):
        build_model(ModelConfig(backend="local"))
