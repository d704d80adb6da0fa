"""Start/stop/restart, kernel death, workdir ownership and process cleanup."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stateguard.errors import KernelDiedError, KernelError
from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel


def test_start_stop_restart_and_cleanup(kernel_children: Callable[[], list[int]]) -> None:
    before = set(kernel_children())
    session = KernelSession(startup_code="import math\nstarted_with = 'startup'")
    workdir = session.workdir
    with pytest.raises(KernelError, match="not started"):
        session.execute("1")
    session.start()
    try:
        assert session.is_alive()
        assert len(set(kernel_children()) - before) == 1
        assert session._proc is not None
        runtime = session._proc._runtime
        assert runtime.is_dir()
        assert session.execute("import os; os.getcwd()").result == repr(str(workdir))
        assert session.execute("math.sqrt(16)").result == "4.0"
        assert session.execute("started_with").result == "'startup'"
        assert session.execute("forgotten = 1").ok
        assert session.execution_count > 0
        session.restart()
        assert not runtime.exists()
        assert session._proc is not None
        runtime = session._proc._runtime
        assert session.execution_count == 0
        assert session.execute("'forgotten' in dir()").result == "False"
        assert session.execute("started_with").result == "'startup'"
        assert len(set(kernel_children()) - before) == 1
    finally:
        session.stop()
    session.stop()  # idempotent
    assert not session.is_alive()
    assert not workdir.exists()
    assert not runtime.exists()
    assert set(kernel_children()) - before == set()


def test_given_workdir_env_and_cleanup_of_files_and_subprocesses(tmp_path: Path) -> None:
    workdir = tmp_path / "nested" / "work"
    with KernelSession(workdir=workdir, env={"SG_TEST_FLAG": "on"}) as session:
        assert session.workdir == workdir
        assert session.execute("import os; os.environ['SG_TEST_FLAG']").result == "'on'"
        assert session.execute("open('out.txt', 'w').write('x')").ok
        # A file left open (data still buffered) is flushed when the session stops.
        assert session.execute("left_open = open('buffered.txt', 'w')\nleft_open.write('y')").ok
        # The child's pid as the host sees it (a sandbox has its own PID namespace).
        marker = f"sg-orphan-{time.monotonic_ns()}"
        res = session.execute(
            "import subprocess, sys\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)',"
            f" {marker!r}])"
        )
        assert res.ok, res.error
        pid = _find_process(marker)
        assert pid is not None and _running(pid)
    assert (workdir / "out.txt").read_text() == "x"
    assert (workdir / "buffered.txt").read_text() == "y"
    # Subprocesses left by user code share the kernel's process group and die with it.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.05)
    assert not _running(pid)


def _find_process(marker: str, wait: float = 5.0) -> int | None:
    """Host pid of the live process whose command line contains `marker`."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and int(entry.name) != os.getpid():
                return int(entry.name)
        time.sleep(0.05)
    return None


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_failing_startup_code_raises_kernel_error(
    kernel_children: Callable[[], list[int]],
) -> None:
    before = set(kernel_children())
    session = KernelSession(startup_code="import module_that_does_not_exist_42")
    try:
        with pytest.raises(KernelError, match=r"startup_code failed.*ModuleNotFoundError"):
            session.start()
    finally:
        session.stop()
    assert set(kernel_children()) - before == set()


@pytest.fixture(scope="module")
def _mortal_session() -> Iterator[KernelSession]:
    with KernelSession() as session:
        yield session


@pytest.fixture
def mortal(_mortal_session: KernelSession) -> KernelSession:
    """A kernel shared by the tests that kill it; handed out alive."""
    if not _mortal_session.is_alive():
        _mortal_session.restart()
    return _mortal_session


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import os; os._exit(1)", "exit code 1"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "SIGSEGV"),
    ],
)
def test_kernel_death_is_reported_and_restart_recovers(
    mortal: KernelSession, code: str, reason: str, kernel_children: Callable[[], list[int]]
) -> None:
    before = set(kernel_children())
    mortal.execute("x = 1")
    started = time.monotonic()
    res = mortal.execute(f"print('before death', flush=True)\n{code}", timeout=60)
    assert time.monotonic() - started < 10
    assert res.status == "dead"
    assert res.error is not None
    assert res.error.ename == "KernelDied"
    assert reason in res.error.evalue
    assert "restart()" in res.error.evalue
    assert not mortal.is_alive()
    assert set(before) - set(kernel_children()) != set()  # the dead kernel was reaped
    with pytest.raises(KernelDiedError, match="restart"):
        mortal.execute("x")
    with pytest.raises(KernelDiedError):
        mortal.run_probe("1")
    mortal.restart()
    assert mortal.is_alive()
    assert mortal.execute("'x' in dir()").result == "False"
    assert mortal.execute("2 + 2").result == "4"


def test_kernel_ignoring_the_interrupt_is_killed(
    mortal: KernelSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stateguard.kernel.session as session_module

    monkeypatch.setattr(session_module, "_INTERRUPT_GRACE", 1.0)
    started = time.monotonic()
    res = mortal.execute(
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
        timeout=1,
    )
    assert time.monotonic() - started < 8
    assert res.status == "dead"
    assert res.error is not None and res.error.ename == "KernelDied"
    assert "exceeded the 1 s timeout" in res.error.evalue
    assert "did not respond to the interrupt" in res.error.evalue
    assert not mortal.is_alive()
    with pytest.raises(KernelDiedError):
        mortal.execute("1")
    mortal.restart()
    assert mortal.execute("3").result == "3"


def test_interrupt_and_double_start(session: KernelSession) -> None:
    with pytest.raises(KernelError, match="already started"):
        session.start()
    session.interrupt()  # idle kernel: harmless
    assert session.execute("1 + 1").result == "2"


def test_run_probe_needs_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import stateguard.kernel.session as session_module

    monkeypatch.setattr(session_module, "probe_supported", lambda: False)
    session = KernelSession()
    with pytest.raises(KernelError, match=r"os\.fork"):
        session.run_probe("1")
    session.stop()
