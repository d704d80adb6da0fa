"""Prompt files of the worker (package data, read with importlib.resources).

``system.md`` is the agent's system prompt; ``corrective.md`` holds one message
per ``## key`` section, shown when a reply is not a valid step; ``observation.md`` the
notes added to an observation (an error's failing line, what a silent cell created). All
use
`string.Template` placeholders (``$data_files``, ``$max_steps``, ``$remaining``).
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from string import Template


def _read(name: str) -> str:
    return files(__name__).joinpath(name).read_text(encoding="utf-8")


@cache
def system_template() -> str:
    """The raw system prompt template."""
    return _read("system.md")


def _sections(name: str) -> dict[str, str]:
    text = _read(name)
    sections = re.split(r"^## +(\S+) *$", text, flags=re.M)
    # sections = [preamble, key1, body1, key2, body2, ...]
    return {key: body.strip() for key, body in zip(sections[1::2], sections[2::2], strict=True)}


@cache
def corrective_messages() -> dict[str, str]:
    """Corrective messages by key (section headings of ``corrective.md``)."""
    return _sections("corrective.md")


@cache
def observation_notes() -> dict[str, str]:
    """Observation notes by key (section headings of ``observation.md``)."""
    return _sections("observation.md")


def render(template: str, **values: object) -> str:
    """Fill ``$name`` placeholders; unknown placeholders are left as they are."""
    return Template(template).safe_substitute({k: str(v) for k, v in values.items()})
