"""`KernelSession`: one persistent ipykernel process driven through jupyter_client.

Following jupyter_client's split, a `KernelManager` owns the process and a blocking
`KernelClient` (one per session) owns the messaging. The kernel runs this
interpreter via ``python -m stateguard.kernel._launch``, which applies the
`ResourceLimits` and the read-only guard of the data directory (see
`stateguard.kernel.guard` for what that guard does and does not prevent). Where
bubblewrap is available the kernel runs inside its sandbox
(`stateguard.kernel.sandbox`); otherwise it runs unconfined and `confinement` says so.
Its environment is allowlisted (`stateguard.kernel.env`): no API keys or tokens.

User code failing, timing out or killing its kernel is an `ExecutionResult`, never an
exception; exceptions are for misuse (e.g. executing on a dead kernel).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import sys
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType
from typing import Any

import zmq

from stateguard.errors import KernelDiedError, KernelError
from stateguard.kernel._collect import Collector
from stateguard.kernel._process import KernelProcess, drain
from stateguard.kernel.env import allowed_environment
from stateguard.kernel.guard import DATA_DIR_ENV
from stateguard.kernel.interpreter import (
    KernelInterpreter,
    kernel_pythonpath,
    package_path,
    resolve_kernel_python,
)
from stateguard.kernel.limits import ResourceLimits, kernel_command
from stateguard.kernel.probe import PROBE_MIME, probe_supported
from stateguard.kernel.results import ErrorInfo, ExecutionResult, ProbeResult
from stateguard.kernel.sandbox import Confinement, SandboxPolicy, resolve_sandbox

# ipykernel options that shorten start-up and keep output machine-readable.
_IPYKERNEL_ARGS = [
    "--HistoryManager.enabled=False",
    "--InteractiveShell.colors=nocolor",
]
_START_TIMEOUT = 60.0
# After a timeout interrupt, how long the kernel gets to report the interrupted cell.
_INTERRUPT_GRACE = 5.0
# Seconds the host waits beyond a probe's own timeout (the kernel kills the probe itself).
_PROBE_MARGIN = 10.0
_POLL_SECONDS = 0.05
_FINALIZE_CODE = "get_ipython().reset(new_session=False)\n__import__('gc').collect()"
_FINALIZE_TIMEOUT = 3.0


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class KernelSession:
    """A persistent IPython kernel with resource limits, a working dir and a read-only data dir.

    The kernel's cwd is `workdir`; `data_dir` (if given) is reachable as
    ``workdir/"data"`` and through the ``STATEGUARD_DATA_DIR`` environment variable.
    `env` is added to the allowlisted host environment. `sandbox` defaults to
    `SandboxPolicy.from_env()` (sandboxed when bubblewrap is available); when the host
    runs as root, a sandboxed kernel runs as an unprivileged user and `workdir` is
    handed to that user. `python` is the kernel's interpreter (default: the one in
    ``STATEGUARD_KERNEL_PYTHON``, else this one); another one is checked at construction
    and raises `KernelPythonError` if it cannot run the kernel
    (`stateguard.kernel.interpreter`).
    """

    def __init__(
        self,
        workdir: Path | None = None,
        data_dir: Path | None = None,
        limits: ResourceLimits = ResourceLimits(),
        env: dict[str, str] | None = None,
        startup_code: str | None = None,
        default_timeout: float = 120.0,
        sandbox: SandboxPolicy | None = None,
        python: str | Path | None = None,
    ) -> None:
        if default_timeout <= 0:
            raise KernelError(f"default_timeout must be positive, got {default_timeout}")
        if data_dir is not None:
            data_dir = Path(data_dir).resolve()
            if not data_dir.is_dir():
                raise KernelError(f"data_dir {data_dir} does not exist or is not a directory")
        self._requested_workdir = None if workdir is None else Path(workdir).absolute()
        self._workdir: Path | None = self._requested_workdir
        self._data_dir = data_dir
        self._limits = limits
        self._env = dict(env or {})
        self._startup_code = startup_code
        self._default_timeout = default_timeout
        self._interpreter = resolve_kernel_python(python)
        self._sandbox, self._confinement = resolve_sandbox(sandbox or SandboxPolicy.from_env())
        if self._sandbox is not None and not self._interpreter.host:
            self._sandbox = self._sandbox.with_interpreter(self._interpreter)
        self._proc: KernelProcess | None = None
        self._workdir_finalizer: weakref.finalize | None = None
        self._dead_reason: str | None = None
        self._execution_count = 0
        self.start_seconds: float | None = None
        """Wall time of the last kernel start (launch until ready, startup_code included)."""

    # ----------------------------------------------------------------- properties
    @property
    def workdir(self) -> Path:
        """The kernel's working directory (a session-owned temp dir if none was given)."""
        return self._ensure_workdir()

    @property
    def data_dir(self) -> Path | None:
        """The resolved read-only data directory, if any."""
        return self._data_dir

    @property
    def execution_count(self) -> int:
        """Prompt number of the last non-silent, history-storing cell (0 after (re)start)."""
        return self._execution_count

    @property
    def confinement(self) -> Confinement:
        """Whether (and how) the kernel is sandboxed; unconfined sessions say why."""
        return self._confinement

    @property
    def interpreter(self) -> KernelInterpreter:
        """The Python the kernel runs on."""
        return self._interpreter

    @property
    def limits(self) -> ResourceLimits:
        """The resource limits applied to the kernel."""
        return self._limits

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Launch the kernel, wait until it answers, run `startup_code`."""
        if self._proc is not None or self._dead_reason is not None:
            raise KernelError("kernel session already started; use restart() to get a new kernel")
        self._launch()

    def stop(self) -> None:
        """Shut the kernel down and remove an owned temp workdir. Idempotent."""
        self._close_process()
        self._dead_reason = None
        if self._workdir_finalizer is not None:
            self._workdir_finalizer()  # removes the owned temp workdir
            self._workdir_finalizer = None
            self._workdir = None

    def restart(self) -> None:
        """Replace the kernel by a fresh one (also after its death); re-runs `startup_code`."""
        self._close_process()
        self._dead_reason = None
        self._launch()

    def is_alive(self) -> bool:
        """True while the kernel process runs."""
        return self._proc is not None and self._dead_reason is None and self._proc.is_alive()

    def interrupt(self) -> None:
        """Send SIGINT to the kernel (interrupts the running cell, if any)."""
        self._require_running().interrupt()

    def __enter__(self) -> KernelSession:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _ensure_workdir(self) -> Path:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="stateguard-"))
            self._workdir_finalizer = weakref.finalize(
                self, shutil.rmtree, self._workdir, ignore_errors=True
            )
        self._workdir.mkdir(parents=True, exist_ok=True)
        return self._workdir

    def _link_data(self, workdir: Path) -> None:
        if self._data_dir is None:
            return
        link = workdir / "data"
        if link.is_symlink():
            if link.resolve() == self._data_dir:
                return
            link.unlink()
        elif link.exists():
            raise KernelError(
                f"{link} already exists and is not a link; it is where data_dir "
                f"{self._data_dir} must be exposed"
            )
        link.symlink_to(self._data_dir, target_is_directory=True)

    def _kernel_env(self) -> dict[str, str]:
        env = allowed_environment()
        env.update(self._env)
        env.pop(DATA_DIR_ENV, None)
        if self._data_dir is not None:
            env[DATA_DIR_ENV] = str(self._data_dir)
        # The kernel's RLIMIT_AS would otherwise be eaten by per-thread malloc arenas.
        env.setdefault("MALLOC_ARENA_MAX", "2")
        if not self._interpreter.host:
            # stateguard is not installed there: its package alone goes on the path (the
            # sandbox replaces this with its own read-only copy of the package)
            env["PYTHONPATH"] = kernel_pythonpath(env, package_path())
            env["PYTHONNOUSERSITE"] = "1"
        return env

    def _launch(self) -> None:
        started = time.monotonic()
        workdir = self._ensure_workdir()
        self._link_data(workdir)
        drop_to = self._sandbox.drop_to if self._sandbox is not None else None
        self._proc = KernelProcess(
            kernel_command(
                self._limits, _IPYKERNEL_ARGS, drop_to=drop_to, python=self._interpreter.executable
            ),
            cwd=workdir,
            env=self._kernel_env(),
            timeout=_START_TIMEOUT,
            sandbox=self._sandbox,
            data_dir=self._data_dir,
        )
        self._execution_count = 0
        if self._startup_code:
            res = self.execute(self._startup_code, silent=True, store_history=False)
            if not res.ok:
                assert res.error is not None
                self._close_process()
                self._dead_reason = None
                raise KernelError(
                    f"startup_code failed ({res.status}): {res.error.ename}: {res.error.evalue}"
                )
        self.start_seconds = time.monotonic() - started

    def _close_process(self, finalize: bool = True) -> None:
        """Kill the kernel; if `finalize`, first let it drop the user namespace.

        Dropping the namespace runs the objects' finalizers (closing and flushing files
        the user left open) in the kernel. atexit hooks of user code do not run.
        """
        if finalize and self._proc is not None and self.is_alive():
            with contextlib.suppress(Exception):
                msg_id = self._proc.kc.execute(
                    _FINALIZE_CODE, silent=True, store_history=False, stop_on_error=False
                )
                self._pump(Collector(msg_id, 1000), time.monotonic() + _FINALIZE_TIMEOUT)
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.close()

    def _require_running(self) -> KernelProcess:
        if self._dead_reason is not None:
            raise KernelDiedError(
                f"the kernel died earlier ({self._dead_reason}); call restart() first"
            )
        if self._proc is None:
            raise KernelError("kernel session is not started; call start() first")
        return self._proc

    # ------------------------------------------------------------------ execution
    def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        silent: bool = False,
        store_history: bool = True,
    ) -> ExecutionResult:
        """Run `code` in the kernel and collect everything it outputs.

        On timeout the kernel is interrupted and the result has status ``"timeout"``
        (the namespace survives). If the kernel process dies, or ignores the interrupt
        and is killed, the result has status ``"dead"`` (its error says which) and
        later calls raise `KernelDiedError` until `restart()`.
        """
        proc = self._require_running()
        timeout = self._default_timeout if timeout is None else timeout
        if timeout <= 0:
            raise KernelError(f"execute timeout must be positive, got {timeout}")
        started = time.monotonic()
        msg_id = proc.kc.execute(
            code,
            silent=silent,
            store_history=store_history,
            allow_stdin=False,
            stop_on_error=False,
        )
        col = Collector(msg_id, self._limits.max_output_chars)
        outcome = self._pump(col, started + timeout)
        timed_out = outcome == "timeout"
        if timed_out:
            with contextlib.suppress(Exception):
                proc.interrupt()
            outcome = self._pump(col, time.monotonic() + _INTERRUPT_GRACE)
            if outcome == "timeout":
                self._declare_dead(
                    f"did not respond to the interrupt {_INTERRUPT_GRACE:g} s after the "
                    f"{timeout:g} s timeout and was killed"
                )
                outcome = "killed"
        wall = time.monotonic() - started
        counted = not silent and store_history
        if col.execution_count is not None and counted:
            self._execution_count = col.execution_count
        count = col.execution_count if counted else None
        if outcome == "dead":
            assert self._dead_reason is not None
            error = ErrorInfo(
                ename="KernelDied",
                evalue=f"the kernel process died ({self._dead_reason}); its state is lost "
                "and restart() is needed",
                traceback=[],
            )
            return col.result("dead", error, wall, count)
        if outcome == "killed":
            # The process is gone: that is a death (callers restart on "dead"), caused
            # by the timeout.
            error = ErrorInfo(
                ename="KernelDied",
                evalue=f"cell exceeded the {timeout:g} s timeout; the kernel "
                f"{self._dead_reason}; its state is lost and restart() is needed",
                traceback=[],
            )
            return col.result("dead", error, wall, count)
        if timed_out:
            message = f"cell exceeded the {timeout:g} s timeout and was interrupted"
            error = ErrorInfo(ename="TimeoutError", evalue=message, traceback=[])
            return col.result("timeout", error, wall, count)
        return col.result(None, None, wall, count)

    def _pump(self, col: Collector, deadline: float) -> str:
        """Feed kernel messages to `col` until it is complete ("done"), "timeout" or "dead"."""
        proc = self._require_running()
        kc = proc.kc
        iopub, shell = kc.iopub_channel.socket, kc.shell_channel.socket
        poller = zmq.Poller()
        poller.register(iopub, zmq.POLLIN)
        poller.register(shell, zmq.POLLIN)
        while not col.done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            events = dict(poller.poll(1000 * min(remaining, _POLL_SECONDS)))
            if iopub in events:
                for msg in drain(kc.iopub_channel):
                    col.on_iopub(msg)
            if shell in events:
                for msg in drain(kc.shell_channel):
                    col.on_shell(msg)
            if not events and not proc.is_alive():
                # Deliver what the kernel sent before dying, then report death.
                for msg in drain(kc.iopub_channel):
                    col.on_iopub(msg)
                self._declare_dead(self._death_reason(proc.returncode()))
                return "dead"
        return "done"

    def _death_reason(self, code: int | None) -> str:
        if code is None:
            return "exit status unknown"
        if code >= 0:
            return f"exit code {code}"
        name = _signal_name(-code)
        if -code == signal.SIGXCPU:
            return f"killed by {name}: CPU time limit of {self._limits.cpu_seconds} s exceeded"
        if -code == signal.SIGKILL:
            return f"killed by {name} (out of memory, CPU hard limit or an external kill)"
        return f"killed by {name}"

    def _declare_dead(self, reason: str) -> None:
        """Record death, then release the process, its group and the channels."""
        self._close_process(finalize=False)
        self._dead_reason = reason

    # ------------------------------------------------------------------ probes
    def run_probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        """Run `code` against a copy-on-write fork of the namespace; the worker is unchanged.

        The probe does not bump the execution count nor fire IPython cell events. Only
        the namespace is isolated: files the probe writes are real. Its stderr is
        captured together with its stdout. Raises `KernelError` where ``os.fork`` is
        unavailable (non-Linux), `KernelDiedError` if the kernel is dead.
        """
        if not probe_supported():
            raise KernelError(f"run_probe needs os.fork on Linux; this is {sys.platform}")
        if timeout <= 0:
            raise KernelError(f"probe timeout must be positive, got {timeout}")
        call = (
            "__import__('stateguard.kernel.probe', fromlist=['run_in_kernel'])"
            f".run_in_kernel({code!r}, {float(timeout)!r}, {self._limits.max_output_chars!r})"
        )
        res = self.execute(call, timeout + _PROBE_MARGIN, silent=True, store_history=False)
        if res.status == "dead":
            assert res.error is not None
            raise KernelDiedError(res.error.evalue)
        payloads = [p["data"] for p in res.private if p.get("mime") == PROBE_MIME]
        if res.status != "ok" or not payloads:
            error = res.error or ErrorInfo(
                ename="KernelError", evalue="the probe returned no result", traceback=[]
            )
            status = "timeout" if res.status == "timeout" else "error"
            return ProbeResult(
                status=status, stdout=res.stdout, error=error, wall_time=res.wall_time
            )
        payload: dict[str, Any] = payloads[-1]
        error_data = payload.get("error")
        return ProbeResult(
            status=payload["status"],
            stdout=payload.get("stdout", ""),
            result=payload.get("result"),
            value=payload.get("value"),
            error=ErrorInfo(**error_data) if error_data else None,
            wall_time=res.wall_time,
        )
