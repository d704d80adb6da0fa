"""Prompts of the manager's LLM policies (package data), filled with `fill`; the words the
worker reads are rendered by `stateguard.hints`."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load(name: str) -> str:
    """The text of a template file in this folder."""
    return resources.files(__name__).joinpath(name).read_text("utf-8")


def fill(name: str, **fields: str) -> str:
    """Replace ``{field}`` placeholders only; other braces (JSON examples) stay as they are."""
    text = load(name)
    for key, value in fields.items():
        text = text.replace("{" + key + "}", value)
    return text
