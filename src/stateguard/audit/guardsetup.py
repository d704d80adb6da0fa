"""Install the join guard in a kernel when pandas is first imported there, not before.

A kernel that never imports pandas pays nothing: `install` only puts a finder on
`sys.meta_path`. When the user's code imports pandas, the finder lets the normal
machinery load it and, right after pandas' own module code has run, installs the
guard (`stateguard.audit.joinguard.install_join_guard`). This module imports
nothing heavy; a kernel that already has pandas gets the guard at once.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any


def _install_now(mode: str) -> None:
    # by name, like the kernel-side install code: importing joinguard imports pandas,
    # which this module must not do before the user's code does (same package)
    importlib.import_module("stateguard.audit.joinguard").install_join_guard(mode=mode)


class _PandasHook(importlib.abc.MetaPathFinder):
    """Finds nothing itself; arms pandas' own loader to install the guard after it ran."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pandas":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once; and the lookup below must not find us
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader: Any = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module
        mode = self.mode

        def exec_module(module: ModuleType) -> None:
            try:
                original(module)
            finally:
                del loader.exec_module  # the loader is pandas' own: back to its method
            with contextlib.suppress(Exception):  # the guard never breaks the user's import
                _install_now(mode)

        loader.exec_module = exec_module
        return spec


def _in_a_shell() -> bool:
    ipython = sys.modules.get("IPython")
    return ipython is not None and ipython.get_ipython() is not None


def install(mode: str = "flag") -> None:
    """Install the guard now if pandas is loaded, else as soon as it is imported.

    Outside an IPython shell nothing is installed: the guard reports through the
    shell's cell hooks, and without them it would only keep records nobody reads.
    """
    if not _in_a_shell():
        return
    if "pandas" in sys.modules:
        _install_now(mode)
        return
    for finder in sys.meta_path:
        if isinstance(finder, _PandasHook):
            finder.mode = mode
            return
    sys.meta_path.insert(0, _PandasHook(mode))


def disarm() -> None:
    """Remove a pending install (pandas not imported yet); an installed guard stays."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PandasHook)]
