"""Fixtures for the llm tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fake_openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """Factory: ``fake_openai(replies)`` starts a FakeOpenAIServer stopped after the test."""
    servers: list[FakeOpenAIServer] = []

    def start(replies, **kwargs) -> FakeOpenAIServer:
        server = FakeOpenAIServer(replies, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
