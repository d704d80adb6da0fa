"""The root conftest refuses model backends that are not scripted."""

from __future__ import annotations

import pytest

from stateguard.llm.local import LlamaCppModel
from stateguard.llm.openai_model import OpenAIChatModel


def test_a_remote_endpoint_fails_the_test() -> None:
    with pytest.raises(pytest.fail.Exception, match="scripted models only"):
        OpenAIChatModel("gpt", base_url="https://api.example.com/v1", api_key="k")
    with pytest.raises(pytest.fail.Exception, match="scripted models only"):
        OpenAIChatModel("gpt", api_key="k")  # the default endpoint is remote too


def test_a_fake_endpoint_on_this_machine_is_allowed() -> None:
    OpenAIChatModel("fake", base_url="http://127.0.0.1:9/v1", api_key="k")


def test_the_embedded_model_needs_the_opt_in_marker() -> None:
    unloaded = object.__new__(LlamaCppModel)  # loading is refused before anything runs
    with pytest.raises(pytest.fail.Exception, match="local_model marker"):
        unloaded.load()
