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
    """

    memory_bytes: int | None = Field(default=4 * 1024**3, gt=0)
    """RLIMIT_AS of the kernel process; None means unlimited."""
    cpu_seconds: int | None = Field(default=3600, gt=0)
    """RLIMIT_CPU of the kernel process; None means unlimited."""
    max_output_chars: int = Field(default=200_000, gt=0)
    """Per stream (stdout, stderr, result text); longer output keeps head and tail."""


LAUNCH_MODULE = "stateguard.kernel._launch"


def kernel_command(limits: ResourceLimits, ipykernel_args: list[str] | None = None) -> list[str]:
    """The kernel's argv: this interpreter running the launcher, then ipykernel's arguments.

    ``{connection_file}`` is left as a template for jupyter_client to fill in.
    """

    def fmt(value: int | None) -> str:
        return "none" if value is None else str(value)

    return [
        sys.executable,
        "-m",
        LAUNCH_MODULE,
        "--memory-bytes",
        fmt(limits.memory_bytes),
        "--cpu-seconds",
        fmt(limits.cpu_seconds),
        "--",
        "-f",
        "{connection_file}",
        *(ipykernel_args or []),
    ]
