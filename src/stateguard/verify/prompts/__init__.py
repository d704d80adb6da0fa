"""Prompt files of the verifier (package data, read with importlib.resources)."""

from __future__ import annotations

from importlib.resources import files


def load(name: str) -> str:
    """The text of prompt file ``name`` in this package."""
    return files(__name__).joinpath(name).read_text(encoding="utf-8")
