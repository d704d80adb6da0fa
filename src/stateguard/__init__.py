"""stateguard: keep multi-turn LLM data-analysis agents from reusing stale results.

`GuardedSession` (from `stateguard.guard`) is the entry point for guarding an agent.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = [
    "CellOutcome",
    "Executor",
    "GuardedSession",
    "Review",
    "__version__",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def __getattr__(name: str) -> Any:
    # lazy, as in stateguard.kernel: the kernel process imports stateguard's in-kernel
    # modules and must not pay for the host side
    if name in ("CellOutcome", "Executor", "GuardedSession", "Review"):
        value = getattr(importlib.import_module("stateguard.guard"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'stateguard' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext stateguard`` (see `stateguard.ipython`)."""
    importlib.import_module("stateguard.ipython").load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext stateguard``."""
    importlib.import_module("stateguard.ipython").unload_ipython_extension(ipython)
