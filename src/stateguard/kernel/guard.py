"""Read-only guard for the data directory, installed inside the kernel process.

The guard is a ``sys.addaudithook`` hook that raises ``PermissionError`` when code in
the kernel tries to modify anything whose resolved path lies inside the data
directory: write-mode ``open``/``os.open`` (mode containing ``w``/``a``/``x``/``+``
or flags with ``O_WRONLY``/``O_RDWR``/``O_CREAT``/``O_TRUNC``/``O_APPEND``), removal,
rename/replace (either end), ``mkdir``/``rmdir``, ``shutil.rmtree``/``copy*``/``move``
targets, ``chmod``/``chown``/``utime``/``truncate``, links, extended attributes and
``sqlite3.connect`` on a plain path (a ``mode=ro`` URI is allowed).
Paths are resolved with symlinks followed (so ``workdir/data/x`` and the absolute
path are the same file), relative to ``dir_fd`` when one is given; file descriptors
are resolved through ``/proc/self/fd``.

This is a guard against *accidents* by analysis code, not a security boundary. In the
bubblewrap sandbox (`stateguard.kernel.sandbox`) the data directory is also a
read-only mount, which is the boundary; without it the kernel runs with the host's
privileges, so a subprocess (``rm``, ``!cp``), a C
extension writing through its own file I/O (e.g. duckdb or pyarrow writers),
``ctypes``, or code that works around the hook by other means can still modify the
data. Renaming a parent of the data directory is not prevented either.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

DATA_DIR_ENV = "STATEGUARD_DATA_DIR"
"""Environment variable naming the data directory inside the kernel (the guard's target)."""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# audit event -> ((index of a path argument, index of its dir_fd argument or None), ...)
_PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.rename": ((0, 2), (1, 3)),
    "os.mkdir": ((0, 2),),
    "os.mkfifo": ((0, 2),),
    "os.mknod": ((0, 3),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),),
    "os.truncate": ((0, None),),
    "os.utime": ((0, 3),),
    "os.link": ((0, 2), (1, 3)),
    "os.symlink": ((1, 2),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "shutil.rmtree": ((0, 1),),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
    "shutil.copytree": ((1, None),),
    "shutil.move": ((0, None), (1, None)),
    # sqlite opens plain paths read-write; see _sqlite_target for URIs.
    "sqlite3.connect": ((0, None),),
}

_HINTS = {
    "sqlite3.connect": "; open it read-only with sqlite3.connect('file:PATH?mode=ro', uri=True)",
}


def _fd_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _candidates(path: Any, dir_fd: Any) -> list[str]:
    """Resolved forms of `path`: fully resolved, and parent-resolved (the entry itself)."""
    if isinstance(path, int):
        target = _fd_path(path)
        return [target] if target else []
    try:
        raw = os.fsdecode(os.fspath(path))
    except TypeError:
        return []
    if not os.path.isabs(raw) and isinstance(dir_fd, int):
        base = _fd_path(dir_fd)
        if base:
            raw = os.path.join(base, raw)
    absolute = os.path.abspath(raw)
    parent, name = os.path.split(absolute)
    return [os.path.realpath(absolute), os.path.join(os.path.realpath(parent), name)]


def _sqlite_target(database: Any) -> Any:
    """The file a sqlite3.connect argument may write: None for a read-only URI."""
    if isinstance(database, bytes):
        database = os.fsdecode(database)
    if isinstance(database, str) and database.startswith("file:"):
        path, _, query = database[len("file:") :].partition("?")
        return None if "mode=ro" in query.split("&") else path
    return database


def make_guard(data_dir: str) -> Callable[[str, tuple[Any, ...]], None]:
    """Build the audit hook that keeps `data_dir` (and everything under it) read-only."""
    root = os.path.realpath(data_dir)
    prefix = root.rstrip(os.sep) + os.sep
    local = threading.local()

    def inside(path: Any, dir_fd: Any = None) -> str | None:
        for cand in _candidates(path, dir_fd):
            if cand == root or cand.startswith(prefix):
                return cand
        return None

    def deny(event: str, path: str) -> None:
        hint = _HINTS.get(event, "")
        raise PermissionError(
            errno.EACCES,
            f"data directory is read-only ({event} refused by stateguard){hint}",
            path,
        )

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" and event not in _PATH_EVENTS:
            return
        # The checks themselves may trigger audit events; never recurse.
        if getattr(local, "busy", False):
            return
        local.busy = True
        try:
            if event == "open":
                path, mode, flags = (*args, None, None, None)[:3]
                writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
                )
                if writes and path is not None and (hit := inside(path)):
                    deny(event, hit)
                return
            for i, fd_i in _PATH_EVENTS[event]:
                target = args[i] if i < len(args) else None
                if event == "sqlite3.connect":
                    target = _sqlite_target(target)
                if target is None:
                    continue
                dir_fd = args[fd_i] if fd_i is not None and fd_i < len(args) else None
                if hit := inside(target, dir_fd):
                    deny(event, hit)
        finally:
            local.busy = False

    return hook


def install_guard(data_dir: str) -> None:
    """Install the read-only guard for `data_dir` in this process (irreversible)."""
    sys.addaudithook(make_guard(data_dir))
