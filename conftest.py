"""Tests talk to scripted models only: no real endpoint, no embedded model by accident.

A test may use `ScriptedModel`, or the OpenAI-compatible client against a fake server
on this machine (loopback). The embedded llama.cpp model needs the opt-in
``local_model`` marker.

Tests marked ``train`` need the ``train`` extra (torch, transformers, TRL, PEFT); without
it they are skipped with a reason naming the extra, so ``pip install -e '.[dev]'`` is enough
for the rest of the suite.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from stateguard.llm import local, openai_model

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_TRAIN_MODULES = ("torch", "transformers", "trl", "peft", "datasets")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests marked ``train`` when a library of the ``train`` extra is missing."""
    missing = [m for m in _TRAIN_MODULES if importlib.util.find_spec(m) is None]
    if not missing:
        return
    if os.environ.get("STATEGUARD_TRAIN") == "required":
        raise pytest.UsageError(
            f"STATEGUARD_TRAIN=required but the train extra is incomplete: {', '.join(missing)} "
            "missing (pip install -e '.[train]')"
        )
    skip = pytest.mark.skip(
        reason=f"needs the train extra ({', '.join(missing)} missing): pip install -e '.[train]'"
    )
    for item in items:
        if item.get_closest_marker("train") is not None:
            item.add_marker(skip)


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
