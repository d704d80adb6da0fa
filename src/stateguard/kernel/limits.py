"""Resource limits of the kernel process and the command line that applies them."""

from __future__ import annotations

import sys

from pydantic import BaseModel, Field


class ResourceLimits(BaseModel, frozen=True):
    """Limits applied to the kernel process (and inherited by everything it forks).

    `memory_bytes` becomes RLIMIT_AS (address space, so it also counts reserved but
    untouched memory); `cpu_seconds` becomes RLIMIT_CPU, i.e. total CPU time of the
    kernel process since it started, including its own start-up (about 1 s).
    Exceeding the CPU limit kills the kernel (SIGXCPU); exceeding the memory limit
    makes the allocation fail, which Python reports as ``MemoryError``.

    `processes` becomes RLIMIT_NPROC. Linux counts it per user id (threads included)
    and does not enforce it for root, so it bounds a fork bomb only when the kernel
    runs as an unprivileged user, which the sandbox guarantees (see
    `stateguard.kernel.sandbox`). `file_size_bytes` (RLIMIT_FSIZE) makes a write
    beyond it fail with ``OSError: [Errno 27] File too large``; `open_files` is
    RLIMIT_NOFILE.
    """

    memory_bytes: int | None = Field(default=4 * 1024**3, gt=0)
    """RLIMIT_AS of the kernel process; None means unlimited."""
    cpu_seconds: int | None = Field(default=3600, gt=0)
    """RLIMIT_CPU of the kernel process; None means unlimited."""
    processes: int | None = Field(default=512, gt=0)
    """RLIMIT_NPROC (processes and threads of the kernel's user); None means unlimited."""
    file_size_bytes: int | None = Field(default=1024**3, gt=0)
    """RLIMIT_FSIZE: the largest file the kernel may write; None means unlimited."""
    open_files: int | None = Field(default=1024, ge=64)
    """RLIMIT_NOFILE of the kernel process; None keeps the inherited limit."""
    max_output_chars: int = Field(default=200_000, gt=0)
    """Per stream (stdout, stderr, result text); longer output keeps head and tail."""


LAUNCH_MODULE = "stateguard.kernel._launch"

# launcher flag -> ResourceLimits field
LIMIT_FLAGS = {
    "--memory-bytes": "memory_bytes",
    "--cpu-seconds": "cpu_seconds",
    "--processes": "processes",
    "--file-size-bytes": "file_size_bytes",
    "--open-files": "open_files",
}


def kernel_command(
    limits: ResourceLimits,
    ipykernel_args: list[str] | None = None,
    *,
    drop_to: tuple[int, int] | None = None,
    python: str | None = None,
) -> list[str]:
    """The kernel's argv: `python` (default: this interpreter) running the launcher, then
    ipykernel's arguments.

    ``{connection_file}`` is left as a template for jupyter_client to fill in.
    `drop_to` (uid, gid) makes the launcher switch to that user after applying the
    limits (used inside the sandbox when the host runs as root).
    """

    def fmt(value: int | None) -> str:
        return "none" if value is None else str(value)

    argv = [python or sys.executable, "-m", LAUNCH_MODULE]
    for flag, field in LIMIT_FLAGS.items():
        argv += [flag, fmt(getattr(limits, field))]
    if drop_to is not None:
        argv += ["--drop-to", f"{drop_to[0]}:{drop_to[1]}"]
    return [*argv, "--", "-f", "{connection_file}", *(ipykernel_args or [])]
