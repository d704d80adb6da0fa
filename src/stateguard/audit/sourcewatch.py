"""Which lake files the agent's own code read in a cell (runs inside the kernel).

`install_source_watch(lake)` adds one Python audit hook (``open`` events) that,
while a cell runs, notes every file under the lake opened for reading, and
publishes the list after the cell as private display data (`READS_MIME`).
Together with the operators' ledger this answers "was this answer computed from
data you never looked at?" for plain pandas code too.

Readers that open files from C without Python's ``open`` (DuckDB, pyarrow) are
not seen. Audit hooks cannot be removed: re-installing replaces what the one
hook reports to, it does not add hooks.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from typing import Any

#: MIME type of the files a cell read, published from the kernel.
READS_MIME = "application/vnd.stateguard.audit.reads+json"

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_WATCH: SourceWatch | None = None
_HOOKED = False
_LOCAL = threading.local()


class SourceWatch:
    """The lake root and the files read during the current cell."""

    def __init__(self, shell: Any, lake: str) -> None:
        self.shell = shell
        self.root = os.path.realpath(lake)
        self.prefix = self.root.rstrip(os.sep) + os.sep
        self.read: dict[str, None] = {}
        self.active = False

    def note(self, path: Any, mode: Any, flags: Any) -> None:
        """Record `path` if it is under the lake and opened for reading only."""
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            return
        if isinstance(flags, int) and flags & _WRITE_FLAGS:
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, (str, os.PathLike)):
            return  # a file descriptor
        full = os.path.realpath(os.fspath(path))
        if full.startswith(self.prefix):
            self.read[os.path.relpath(full, self.root).replace(os.sep, "/")] = None

    def pre_run_cell(self, info: Any) -> None:
        """Start noting reads for this cell."""
        self.read = {}
        self.active = True

    def post_run_cell(self, result: Any) -> None:
        """Stop noting and publish what was read (nothing when no lake file was)."""
        self.active = False
        if not self.read:
            return
        from IPython.display import publish_display_data

        publish_display_data({READS_MIME: {"paths": list(self.read)}})


def _hook(event: str, args: tuple[Any, ...]) -> None:
    watch = _WATCH
    if event != "open" or watch is None or not watch.active:
        return
    if getattr(_LOCAL, "busy", False):  # realpath may itself raise audit events
        return
    _LOCAL.busy = True
    try:
        path, mode, flags = (*args, None, None, None)[:3]
        watch.note(path, mode, flags)
    except Exception:  # bookkeeping must never break the user's open()
        pass
    finally:
        _LOCAL.busy = False


def install_source_watch(lake: str, shell: Any | None = None) -> SourceWatch:
    """Watch reads under `lake` (relative paths resolve against the current directory)."""
    global _WATCH, _HOOKED
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if _WATCH is not None:
        for event, cb in (
            ("pre_run_cell", _WATCH.pre_run_cell),
            ("post_run_cell", _WATCH.post_run_cell),
        ):
            if cb in shell.events.callbacks[event]:
                shell.events.unregister(event, cb)
    _WATCH = SourceWatch(shell, lake)
    shell.events.register("pre_run_cell", _WATCH.pre_run_cell)
    shell.events.register("post_run_cell", _WATCH.post_run_cell)
    if not _HOOKED:
        sys.addaudithook(_hook)
        _HOOKED = True
    return _WATCH


def install_code(lake: str) -> str:
    """Python source a host runs (silently) in a kernel to install the watch."""
    return (
        "__import__('stateguard.audit.sourcewatch', fromlist=['install_source_watch'])"
        f".install_source_watch({lake!r})"
    )


def files_read(private: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """Lake files (relative paths) a cell's own code read, from its private payloads."""
    for p in private:
        if p.get("mime") == READS_MIME:
            return tuple(p.get("data", {}).get("paths", ()))
    return ()
