"""Kernel entry point: ``python -m stateguard.kernel._launch [limits] -- <ipykernel args>``.

Applies the resource limits and the data-directory guard to *this* process, switches
to an unprivileged user if asked (``--drop-to UID:GID``, used inside the sandbox when
the host runs as root), then runs ``ipykernel_launcher`` in-process, so the limits and
the guard cover all user code. Imports only the standard library and the guard (it
runs before anything else).
"""

from __future__ import annotations

import os
import resource
import runpy
import signal
import sys

from stateguard.kernel.guard import DATA_DIR_ENV, install_guard

# RLIMIT_CPU's hard limit sits this far above the soft one: SIGXCPU at the soft
# limit kills the kernel, SIGKILL at the hard limit covers code that handles SIGXCPU.
_CPU_HARD_MARGIN = 2

# Must match stateguard.kernel.limits.LIMIT_FLAGS (not imported: it needs pydantic).
_LIMIT_FLAGS = {
    "--memory-bytes": "memory_bytes",
    "--cpu-seconds": "cpu_seconds",
    "--processes": "processes",
    "--file-size-bytes": "file_size_bytes",
    "--open-files": "open_files",
}

_RLIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "processes": resource.RLIMIT_NPROC,
    "file_size_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
}


def _parse_limit(flag: str, value: str) -> int | None:
    if value == "none":
        return None
    try:
        number = int(value)
    except ValueError:
        raise SystemExit(f"{flag} expects an integer or 'none', got {value!r}") from None
    if number <= 0:
        raise SystemExit(f"{flag} must be positive, got {number}")
    return number


def _parse_ids(value: str) -> tuple[int, int]:
    uid, sep, gid = value.partition(":")
    if not sep or not uid.isdigit() or not gid.isdigit():
        raise SystemExit(f"--drop-to expects UID:GID, got {value!r}")
    return int(uid), int(gid)


def parse_args(argv: list[str]) -> tuple[dict[str, int | None], tuple[int, int] | None, list[str]]:
    """Split argv into (limits by field name, drop-to ids or None, ipykernel argv)."""
    limits: dict[str, int | None] = {}
    drop_to: tuple[int, int] | None = None
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest = argv[i + 1 :]
            break
        if arg in _LIMIT_FLAGS and i + 1 < len(argv):
            limits[_LIMIT_FLAGS[arg]] = _parse_limit(arg, argv[i + 1])
            i += 2
            continue
        if arg == "--drop-to" and i + 1 < len(argv):
            drop_to = _parse_ids(argv[i + 1])
            i += 2
            continue
        raise SystemExit(f"unknown launcher argument {arg!r}")
    return limits, drop_to, rest


def _set_limit(which: int, soft: int, hard: int) -> None:
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


def apply_rlimits(limits: dict[str, int | None]) -> None:
    """Apply the given rlimits (None = leave unlimited) to this process; no core dumps."""
    for field, which in _RLIMITS.items():
        value = limits.get(field)
        if value is not None:
            _set_limit(which, value, value)
    cpu = limits.get("cpu_seconds")
    if cpu is not None:
        _set_limit(resource.RLIMIT_CPU, cpu, cpu + _CPU_HARD_MARGIN)
    # A crashing kernel must not leave multi-GB core files in the working dir.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def drop_privileges(uid: int, gid: int) -> None:
    """Become `uid`:`gid` with no supplementary groups, irreversibly, or exit."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise SystemExit(f"could not switch to uid {uid} / gid {gid}")
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise SystemExit("dropping privileges failed: the kernel could become root again")


def main() -> None:
    """Apply limits, drop privileges, install the guard, then hand over to ipykernel."""
    limits, drop_to, rest = parse_args(sys.argv[1:])
    apply_rlimits(limits)
    if drop_to is not None:
        drop_privileges(*drop_to)
    # The host's launch wrapper ignores SIGINT (so that an interrupt of the process
    # group does not kill the sandbox's own processes); the kernel needs it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    data_dir = os.environ.get(DATA_DIR_ENV)
    if data_dir:
        install_guard(data_dir)
    sys.argv = ["ipykernel_launcher", *rest]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
