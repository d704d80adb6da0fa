"""One launched kernel process: its jupyter_client manager, client, sockets and output log."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
import weakref
from pathlib import Path
from typing import IO, Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import KernelManager

from stateguard.errors import KernelError
from stateguard.kernel.sandbox import Sandbox

_LOG_TAIL_CHARS = 4000


class _Manager(KernelManager):
    """A KernelManager whose kernel spec is built in code rather than looked up on disk."""

    _stateguard_spec: KernelSpec | None = None
    _stateguard_owner: tuple[int, int] | None = None

    @property
    def kernel_spec(self) -> KernelSpec | None:
        """The spec set right after construction."""
        return self._stateguard_spec

    def write_connection_file(self, **kwargs: Any) -> None:
        """Write it as usual, then hand it to the sandbox user (who must read it)."""
        super().write_connection_file(**kwargs)
        if self._stateguard_owner is not None:
            os.chown(self.connection_file, *self._stateguard_owner)


def drain(channel: Any) -> list[dict[str, Any]]:
    """All messages already waiting on `channel`, without blocking.

    (jupyter_client's ``get_msgs`` blocks forever on an empty channel.)
    """
    msgs = []
    while channel.msg_ready():
        msgs.append(channel.get_msg(timeout=0))
    return msgs


def _cleanup(km: KernelManager, runtime: Path) -> None:
    """Kill the kernel and its process group, remove connection and socket files."""
    pgid = getattr(km.provisioner, "pgid", None)
    with contextlib.suppress(Exception):
        km.shutdown_kernel(now=True)
    # Subprocesses left by user code share the kernel's process group.
    if pgid:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    shutil.rmtree(runtime, ignore_errors=True)


class KernelProcess:
    """A started, ready kernel. `close()` (or garbage collection) kills it and cleans up.

    Connection file and ipc sockets live in a private runtime dir: no TCP ports to race
    for, nothing reachable from outside the host, and absolute socket paths (the
    kernel's cwd differs from ours). Unix sockets also cross the sandbox's network
    namespace: with a `sandbox`, `argv` runs inside it and only the socket directory
    (``runtime/ipc``) of the runtime dir is visible there.
    """

    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        *,
        sandbox: Sandbox | None = None,
        data_dir: Path | None = None,
    ) -> None:
        self._runtime = Path(tempfile.mkdtemp(prefix="stateguard-rt-"))
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed in close())
        self.sandbox = sandbox
        ipc_dir = self._runtime / "ipc"
        ipc_dir.mkdir(mode=0o700)
        km = _Manager(
            transport="ipc",
            ip=str(ipc_dir / "kernel-ipc"),
            connection_file=str(ipc_dir / "kernel.json"),
        )
        if sandbox is not None:
            etc = sandbox.prepare(self._runtime, ipc_dir, cwd)
            argv = sandbox.wrap(argv, etc=etc, ipc_dir=ipc_dir, workdir=cwd, data_dir=data_dir)
            env = sandbox.kernel_env(env)
            km._stateguard_owner = sandbox.owner()
        km._stateguard_spec = KernelSpec(
            argv=argv, display_name="stateguard", language="python", interrupt_mode="signal"
        )
        self.km = km
        self._finalizer = weakref.finalize(self, _cleanup, km, self._runtime)
        try:
            km.start_kernel(cwd=str(cwd), env=env, stdout=self._log, stderr=self._log)
        except Exception as exc:
            self.close()
            raise KernelError(f"could not launch the kernel process: {exc}") from exc
        self.kc: BlockingKernelClient = km.client()
        self.kc.start_channels()
        try:
            self._wait_ready(time.monotonic() + timeout)
        except KernelError as exc:
            log = self.log_tail()
            self.close()
            raise KernelError(f"{exc}; the kernel's output ends with:\n{log}") from None

    def _wait_ready(self, deadline: float) -> None:
        """Block until the kernel answers kernel_info and iopub delivers messages."""
        kc = self.kc
        while time.monotonic() < deadline:
            msg_id = kc.kernel_info()
            reply_deadline = time.monotonic() + 1.0
            while time.monotonic() < reply_deadline:
                if not self.km.is_alive():
                    raise KernelError("the kernel process exited during start-up")
                if kc.shell_channel.socket.poll(100):
                    reply = kc.shell_channel.get_msg(timeout=0)
                    if reply["parent_header"].get("msg_id") == msg_id:
                        break
            else:
                continue
            # iopub is a SUB socket: it is connected once the kernel's busy/idle for
            # our request arrives.
            if kc.iopub_channel.socket.poll(500):
                return
        raise KernelError("the kernel did not become ready in time")

    def is_alive(self) -> bool:
        """True while the kernel process runs."""
        return self.km.is_alive()

    def interrupt(self) -> None:
        """SIGINT to the kernel."""
        self.km.interrupt_kernel()

    def returncode(self) -> int | None:
        """Exit status as Popen reports it (negative = killed by that signal), if exited.

        In the sandbox, bwrap's 128 + N for a kernel killed by signal N becomes -N.
        """
        process = getattr(self.km.provisioner, "process", None)
        code = process.poll() if process is not None else None
        if self.sandbox is not None and (signum := self.sandbox.exit_signal(code)) is not None:
            return -signum
        return code

    def log_tail(self) -> str:
        """The end of what the kernel process wrote outside of cell executions."""
        if self._log.closed:
            return ""
        self._log.seek(0)
        data = self._log.read().decode(errors="replace")
        return data[-_LOG_TAIL_CHARS:] or "(no output)"

    def close(self) -> None:
        """Kill the kernel and its process group; remove its files. Idempotent.

        No shutdown_request: ipykernel's own shutdown can stall for seconds (its
        control thread flushes output through the iopub thread the main thread is
        closing). The session finalizes the user namespace before calling this.
        """
        if not self._finalizer.alive:
            return
        kc = getattr(self, "kc", None)
        if kc is not None:
            with contextlib.suppress(Exception):
                kc.stop_channels()
        self._finalizer()
        self._log.close()
