"""Fork-based probes: run code against a copy-on-write snapshot of the kernel's namespace.

This module runs *inside the kernel* (standard library only). The host calls
`run_in_kernel` through a silent execute; it forks, the child runs the probe code
against its copy of ``get_ipython().user_ns`` with stdout captured, and sends a JSON
payload back over a pipe before ``os._exit``. The parent publishes the payload as a
display_data with MIME type `PROBE_MIME`, which the host reads from
``ExecutionResult.private``. Whatever the probe does to its namespace dies with the
child, so the worker's namespace, execution count and IPython events are untouched.
"""

from __future__ import annotations

import ast
import io
import json
import logging
import os
import select
import signal
import sys
import time
import traceback
from typing import Any

from stateguard.kernel._text import CappedText, strip_ansi, truncate_middle

PROBE_MIME = "application/vnd.stateguard.probe+json"
_FILENAME = "<probe>"
_MAX_VALUE_JSON_CHARS = 1_000_000


def probe_supported() -> bool:
    """Probes need ``os.fork`` with Linux semantics."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def _json_default(obj: Any) -> Any:
    # numpy/pandas scalars are 0-d and know their Python value.
    if getattr(obj, "ndim", None) == 0 and hasattr(obj, "item"):
        return obj.item()
    raise TypeError(type(obj).__name__)


def _json_value(value: Any) -> Any:
    try:
        dumped = json.dumps(value, allow_nan=False, default=_json_default)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None
    return json.loads(dumped) if len(dumped) <= _MAX_VALUE_JSON_CHARS else None


def _error_payload(exc: BaseException) -> dict[str, Any]:
    tb = exc.__traceback__
    # Drop this module's frames: the user sees only frames of the probe code.
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    return {
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": [strip_ansi(line.rstrip("\n")) for line in lines],
    }


def _plain_text(shell: Any, value: Any) -> str:
    try:
        return str(shell.display_formatter.formatters["text/plain"](value))
    except Exception:
        return repr(value)


class _Capture(io.TextIOBase):
    """A writable text stream over a `CappedText` (stands in for sys.stdout/stderr)."""

    def __init__(self, max_chars: int) -> None:
        super().__init__()
        self.text = CappedText(max_chars)

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text.write(s)
        return len(s)


def _child_run(code: str, shell: Any, max_chars: int) -> dict[str, Any]:
    """Run `code` in the (forked) shell's namespace; never raises."""
    out = _Capture(max_chars)
    old_streams = (sys.stdout, sys.stderr)
    sys.stdout = sys.stderr = out
    # The kernel's output streams go through threads that do not exist in the child.
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in old_streams:
            handler.stream = out
    if shell is not None:
        shell.display_pub.publish = lambda data, *a, **k: out.write(
            str(data.get("text/plain", "")) + "\n"
        )
    ns = shell.user_ns if shell is not None else {}
    payload: dict[str, Any] = {"status": "ok", "result": None, "value": None, "error": None}
    try:
        tree = ast.parse(code, _FILENAME)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, _FILENAME, "exec"), ns)
        if last is not None:
            value = eval(compile(last, _FILENAME, "eval"), ns)
            if value is not None:
                payload["result"] = truncate_middle(_plain_text(shell, value), max_chars)
                payload["value"] = _json_value(value)
    except BaseException as exc:
        payload.update(status="error", error=_error_payload(exc))
    payload["stdout"] = out.text.getvalue()
    return payload


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by signal {name}"
    return f"exit code {os.WEXITSTATUS(status)}"


def fork_and_run(code: str, shell: Any, timeout: float, max_chars: int) -> dict[str, Any]:
    """Run `code` in a forked child of this process; return the JSON-able payload."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns
        try:
            os.close(read_fd)
            _write_all(write_fd, json.dumps(_child_run(code, shell, max_chars)).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    finished = False
    deadline = time.monotonic() + timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    finished = True
                    break
                chunks.append(chunk)
    finally:
        os.close(read_fd)
        if not finished:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if not finished:
        return {
            "status": "timeout",
            "stdout": "",
            "result": None,
            "value": None,
            "error": {
                "ename": "TimeoutError",
                "evalue": f"probe exceeded its {timeout:g} s timeout and was killed",
                "traceback": [],
            },
        }
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {
            "status": "error",
            "stdout": "",
            "result": None,
            "value": None,
            "error": {
                "ename": "ProbeCrashed",
                "evalue": f"the probe process died without a result ({_describe_status(status)})",
                "traceback": [],
            },
        }


def run_in_kernel(code: str, timeout: float, max_chars: int) -> None:
    """Entry point called by the host inside the kernel: probe, then publish the payload."""
    from IPython import get_ipython
    from IPython.display import publish_display_data

    if not probe_supported():
        payload: dict[str, Any] = {
            "status": "error",
            "stdout": "",
            "result": None,
            "value": None,
            "error": {"ename": "KernelError", "evalue": "probes need os.fork", "traceback": []},
        }
    else:
        payload = fork_and_run(code, get_ipython(), timeout, max_chars)
    publish_display_data({PROBE_MIME: payload})
