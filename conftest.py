"""Tests talk to scripted models only: no real endpoint, no embedded model by accident.

A test may use `ScriptedModel`, or the OpenAI-compatible client against a fake server
on this machine (loopback). The embedded llama.cpp model needs the opt-in
``local_model`` marker.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from stateguard.llm import local, openai_model

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@pytest.fixture(autouse=True)
def only_scripted_models(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that builds a model backend other than a scripted one."""
    with pytest.MonkeyPatch.context() as mp:
        openai_init = openai_model.OpenAIChatModel.__init__
        local_load = local.LlamaCppModel.load

        def openai_only_local(self: Any, *args: Any, **kwargs: Any) -> None:
            url = kwargs.get("base_url") or "https://api.openai.com/v1"
            if urlparse(url).hostname not in _LOOPBACK:
                pytest.fail(f"tests use scripted models only, not the endpoint {url}")
            openai_init(self, *args, **kwargs)

        def embedded_opt_in(self: Any, *args: Any, **kwargs: Any) -> Any:
            if request.node.get_closest_marker("local_model") is None:
                pytest.fail("the embedded model needs the local_model marker")
            return local_load(self, *args, **kwargs)

        mp.setattr(openai_model.OpenAIChatModel, "__init__", openai_only_local)
        mp.setattr(local.LlamaCppModel, "load", embedded_opt_in)
        yield
