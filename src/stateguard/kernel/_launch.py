"""Kernel entry point: ``python -m stateguard.kernel._launch [limits] -- <ipykernel args>``.

Applies the resource limits and the data-directory guard to *this* process, then runs
``ipykernel_launcher`` in-process, so the limits and the guard cover all user code.
Imports only the standard library and the guard (it runs before anything else).
"""

from __future__ import annotations

import os
import resource
import runpy
import sys

from stateguard.kernel.guard import DATA_DIR_ENV, install_guard

# RLIMIT_CPU's hard limit sits this far above the soft one: SIGXCPU at the soft
# limit kills the kernel, SIGKILL at the hard limit covers code that handles SIGXCPU.
_CPU_HARD_MARGIN = 2


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


def parse_args(argv: list[str]) -> tuple[int | None, int | None, list[str]]:
    """Split argv into (memory_bytes, cpu_seconds, ipykernel argv)."""
    memory: int | None = None
    cpu: int | None = None
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest = argv[i + 1 :]
            break
        if arg in ("--memory-bytes", "--cpu-seconds") and i + 1 < len(argv):
            if arg == "--memory-bytes":
                memory = _parse_limit(arg, argv[i + 1])
            else:
                cpu = _parse_limit(arg, argv[i + 1])
            i += 2
            continue
        raise SystemExit(f"unknown launcher argument {arg!r}")
    return memory, cpu, rest


def _set_limit(which: int, soft: int, hard: int) -> None:
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


def apply_rlimits(memory_bytes: int | None, cpu_seconds: int | None) -> None:
    """Apply RLIMIT_AS / RLIMIT_CPU to this process and disable core dumps."""
    if memory_bytes is not None:
        _set_limit(resource.RLIMIT_AS, memory_bytes, memory_bytes)
    if cpu_seconds is not None:
        _set_limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + _CPU_HARD_MARGIN)
    # A crashing kernel must not leave multi-GB core files in the working dir.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main() -> None:
    """Apply limits and guard, then hand the process over to ipykernel."""
    memory, cpu, rest = parse_args(sys.argv[1:])
    apply_rlimits(memory, cpu)
    data_dir = os.environ.get(DATA_DIR_ENV)
    if data_dir:
        install_guard(data_dir)
    sys.argv = ["ipykernel_launcher", *rest]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
