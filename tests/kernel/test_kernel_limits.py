"""Resource limits enforced on a real kernel."""

from __future__ import annotations

import time

import pytest

from stateguard.errors import KernelError
from stateguard.kernel import KernelSession, ResourceLimits

pytestmark = pytest.mark.kernel


def test_memory_limit_gives_memory_error_result() -> None:
    limits = ResourceLimits(memory_bytes=int(1.5 * 1024**3))
    with KernelSession(limits=limits) as session:
        session.execute("import pandas, numpy\nkept = list(range(10))")
        started = time.monotonic()
        res = session.execute("big = bytearray(3 * 1024**3)", timeout=60)
        assert time.monotonic() - started < 20
        assert res.status == "error"
        assert res.error is not None
        assert res.error.ename == "MemoryError"
        assert session.is_alive()
        assert session.execute("sum(kept)").result == "45"
        usage = session.execute("import resource\nresource.getrlimit(resource.RLIMIT_AS)[0]").result
        assert usage == str(int(1.5 * 1024**3))


def test_cpu_limit_kills_busy_kernel_quickly() -> None:
    with KernelSession(limits=ResourceLimits(cpu_seconds=2)) as session:
        started = time.monotonic()
        res = session.execute("while True:\n    pass", timeout=60)
        assert time.monotonic() - started < 15
        assert res.status == "dead"
        assert res.error is not None
        assert res.error.ename == "KernelDied"
        assert "SIGXCPU" in res.error.evalue
        assert "CPU time limit of 2 s" in res.error.evalue
        session.restart()
        assert session.execute("1 + 1").result == "2"


def test_unlimited_limits_are_not_applied() -> None:
    limits = ResourceLimits(memory_bytes=None, cpu_seconds=None)
    with KernelSession(limits=limits) as session:
        res = session.execute(
            "import resource\n"
            "(resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY,"
            " resource.getrlimit(resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY,"
            " resource.getrlimit(resource.RLIMIT_CORE)[0])"
        )
        assert res.result == "(True, True, 0)"


def test_kernel_that_cannot_start_raises_kernel_error_with_its_output() -> None:
    session = KernelSession(limits=ResourceLimits(memory_bytes=60 * 1024**2))
    try:
        with pytest.raises(KernelError, match="during start-up; the kernel's output ends with"):
            session.start()
        assert not session.is_alive()
    finally:
        session.stop()
