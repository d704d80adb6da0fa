"""Process probes: subprocesses, fork bombs, file size, killing the parent, orphans."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from security_probes import find_processes, require_confined, run, wait_gone

from stateguard.kernel import KernelSession, ResourceLimits, SandboxPolicy

pytestmark = pytest.mark.kernel


def test_a_subprocess_is_confined_like_the_kernel(session: KernelSession) -> None:
    require_confined(session)
    res = run(
        session,
        "import subprocess\n"
        "proc = subprocess.run(['sh', '-c', 'id -u; ls /root/.ssh; ls /home; cat /etc/shadow;"
        ' ls /proc | grep -c -E "^[0-9]+$"\'], capture_output=True, text=True)\n'
        "proc.stdout.split()",
    )
    uid, processes = eval(res.result or "[]")
    assert uid != "0" or os.geteuid() != 0  # a root host's kernel is not root
    if os.geteuid() == 0:
        assert uid == "65534"
    # Only the sandbox's own processes: bwrap's init, the kernel, sh, ls/grep.
    assert int(processes) < 10


def test_kernel_is_not_root_and_cannot_become_root(session: KernelSession) -> None:
    require_confined(session)
    res = run(
        session,
        "import os, subprocess\n"
        "try:\n"
        "    os.setuid(0)\n"
        "    regained = 'yes'\n"
        "except OSError:\n"  # EPERM, or EINVAL where uid 0 is not mapped (user namespace)
        "    regained = 'no'\n"
        "status = open('/proc/self/status').read()\n"
        "caps = [l.split()[1] for l in status.splitlines() if l.startswith('CapEff')]\n"
        "nnp = [l.split()[1] for l in status.splitlines() if l.startswith('NoNewPrivs')]\n"
        "os.geteuid(), regained, caps, nnp",
    )
    euid, regained, caps, nnp = eval(res.result or "None")
    assert euid != 0
    assert regained == "no"
    assert caps == ["0000000000000000"]
    assert nnp == ["1"]


def _tasks_of(uid: int) -> int:
    """Threads of every process of `uid` now: RLIMIT_NPROC counts them all, so other
    sandboxes of the same user on this machine share the budget."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


def test_fork_bomb_is_bounded_by_the_process_limit() -> None:
    sandbox_uid = 65534 if os.getuid() == 0 else os.getuid()
    budget = 64 + _tasks_of(sandbox_uid)  # 64 more than what that user already runs
    with KernelSession(limits=ResourceLimits(processes=budget), default_timeout=60) as session:
        require_confined(session)
        res = run(
            session,
            "import os, time\n"
            "children, refused = [], None\n"
            "for _ in range(300):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as exc:\n"
            "        refused = exc.errno\n"
            "        break\n"
            "    if pid == 0:\n"
            "        time.sleep(30)\n"
            "        os._exit(0)\n"
            "    children.append(pid)\n"
            "for pid in children:\n"
            "    os.kill(pid, 9)\n"
            "    os.waitpid(pid, 0)\n"
            "len(children), refused",
        )
        forked, refused = eval(res.result or "None")
        assert refused == errno.EAGAIN
        # 64 slots above the user's tasks when the budget was set; other kernels of the same
        # sandbox user (a benchmark beside the suite) may end meanwhile and free a few more
        assert forked < 64 + 16
        assert session.execute("1 + 1").result == "2"


def test_a_file_larger_than_the_limit_cannot_be_written() -> None:
    limits = ResourceLimits(file_size_bytes=8 * 1024**2)
    with KernelSession(limits=limits) as session:
        res = session.execute(
            "with open('big.bin', 'wb') as f:\n    f.write(b'x' * (16 * 1024**2))"
        )
        assert res.error is not None
        assert res.error.ename == "OSError"
        assert "File too large" in res.error.evalue
        assert session.is_alive()
        assert (session.workdir / "big.bin").stat().st_size <= 8 * 1024**2


def test_killing_the_parent_does_not_reach_the_host() -> None:
    with KernelSession() as session:
        require_confined(session)
        res = run(session, "import os\nos.getppid()")
        assert res.result != str(os.getpid())
        session.execute("import os\nos.kill(os.getppid(), 9)")
        session.execute(f"import os\nos.kill({os.getpid()}, 9)")
        res = session.execute("import os\nos.kill(-1, 9)")
        # Still here: the test process (the host) survived all three.
        assert os.getpid() > 0
        assert res.status in ("ok", "dead", "error")


def test_host_pid_is_not_addressable(session: KernelSession) -> None:
    require_confined(session)
    res = run(
        session,
        "import os\n"
        "try:\n"
        f"    os.kill({os.getpid()}, 0)\n"
        "    outcome = 'reachable'\n"
        "except OSError as exc:\n"
        "    outcome = exc.errno\n"
        "outcome",
    )
    assert res.result == str(errno.ESRCH)


def test_orphans_and_daemons_die_with_the_session() -> None:
    marker = f"sg-daemon-{time.monotonic_ns()}"
    session = KernelSession()
    session.start()
    try:
        # A double-forked, setsid'd daemon leaves the kernel's process group.
        run(
            session,
            "import subprocess\n"
            "subprocess.Popen(['sh', '-c', 'setsid sh -c \"sleep 600; : "
            f"{marker}\" &'], start_new_session=True)",
        )
        deadline = time.monotonic() + 30  # a loaded machine may take seconds to fork
        while not find_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert find_processes(marker)
        confined = session.confinement.confined
    finally:
        session.stop()
    left = wait_gone(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    if not confined:
        pytest.skip("kernel is unconfined; a daemon may outlive it (reported as unconfined)")
    assert left == []


_HOST_SCRIPT = """
import sys, time
from stateguard.kernel import KernelSession
s = KernelSession()
s.start()
print(s.confinement.confined, flush=True)
s.execute("import subprocess; subprocess.Popen(['sleep', '600', {marker!r}])")
print("ready", flush=True)
time.sleep(600)
"""


def test_kernel_and_its_children_die_when_the_host_is_killed(tmp_path: Path) -> None:
    marker = f"sg-host-{time.monotonic_ns()}"
    host = subprocess.Popen(
        [sys.executable, "-c", _HOST_SCRIPT.format(marker=marker)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert host.stdout is not None
        confined = host.stdout.readline().strip() == "True"
        assert host.stdout.readline().strip() == "ready"
        assert find_processes(marker)
    finally:
        host.kill()
        host.wait()
    left = wait_gone(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    if not confined:
        pytest.skip("kernel is unconfined; its children may outlive the host")
    assert left == []


def test_open_files_are_bounded() -> None:
    with KernelSession(limits=ResourceLimits(open_files=64)) as session:
        res = run(
            session,
            "import errno\n"
            "held, refused = [], None\n"
            "try:\n"
            "    for _ in range(1000):\n"
            "        held.append(open('/dev/null'))\n"
            "except OSError as exc:\n"
            "    refused = exc.errno\n"
            "for f in held:\n"
            "    f.close()\n"
            "len(held) < 64, refused == errno.EMFILE",
        )
        assert res.result == "(True, True)"


def test_private_tmp_is_bounded() -> None:
    policy = SandboxPolicy.from_env().model_copy(update={"tmp_bytes": 16 * 1024**2})
    with KernelSession(sandbox=policy) as session:
        require_confined(session)
        res = run(
            session,
            "import errno\n"
            "try:\n"
            "    with open('/tmp/fill', 'wb') as f:\n"
            "        for _ in range(64):\n"
            "            f.write(b'x' * 1024**2)\n"
            "    outcome = 'written'\n"
            "except OSError as exc:\n"
            "    outcome = exc.errno == errno.ENOSPC\n"
            "outcome",
        )
        assert res.result == "True"
