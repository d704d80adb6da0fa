"""The versioned variable key shared across packages.

`VarKey` is the one way to read and write a versioned variable key, ``name@vN``
(``name`` may carry a part path, e.g. ``orders['margin']@v2``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_KEY = re.compile(r"^(?P<name>.+)@v(?P<version>\d+)$", re.S)


class VarKey(NamedTuple):
    """A versioned variable: ``name@vN``."""

    name: str
    version: int

    @classmethod
    def parse(cls, key: str) -> VarKey:
        """``"cost@v2"`` -> ``VarKey("cost", 2)``; ValueError for anything else."""
        match = _KEY.match(key)
        if match is None:
            raise ValueError(f"not a versioned variable key (name@vN): {key!r}")
        return cls(match["name"], int(match["version"]))

    @staticmethod
    def is_key(text: str) -> bool:
        """True for ``name@vN``, False for a bare name."""
        return _KEY.match(text) is not None

    @staticmethod
    def name_of(text: str) -> str:
        """The name of a key, or the text itself when it is a bare name."""
        match = _KEY.match(text)
        return match["name"] if match else text

    def __str__(self) -> str:
        return f"{self.name}@v{self.version}"
