"""Collects the kernel messages that belong to one execute request into an ExecutionResult."""

from __future__ import annotations

from typing import Any

from stateguard.kernel._text import CappedText, strip_ansi, truncate_middle
from stateguard.kernel.results import (
    KEPT_MIMES,
    PRIVATE_MIME_PREFIX,
    DisplayData,
    ErrorInfo,
    ExecutionResult,
    ExecutionStatus,
)


class Collector:
    """Accumulates iopub/shell messages whose parent is `msg_id`; ignores all others.

    Complete (`done`) once both the iopub ``status: idle`` and the shell
    ``execute_reply`` for the request arrived: iopub is ordered, so idle comes after
    every output of the request.
    """

    def __init__(self, msg_id: str, max_chars: int) -> None:
        self.msg_id = msg_id
        self.max_chars = max_chars
        self.stdout = CappedText(max_chars)
        self.stderr = CappedText(max_chars)
        self.result_text: str | None = None
        self.displays: list[DisplayData] = []
        self.private: list[dict[str, Any]] = []
        self.error: ErrorInfo | None = None
        self.execution_count: int | None = None
        self.reply: dict[str, Any] | None = None
        self.idle = False

    @property
    def done(self) -> bool:
        """True when the request's output is complete."""
        return self.idle and self.reply is not None

    def _ours(self, msg: dict[str, Any]) -> bool:
        return msg.get("parent_header", {}).get("msg_id") == self.msg_id

    def on_shell(self, msg: dict[str, Any]) -> None:
        """Take the execute_reply of our request."""
        if self._ours(msg) and msg["msg_type"] == "execute_reply":
            self.reply = msg["content"]
            count = self.reply.get("execution_count")
            if isinstance(count, int):
                self.execution_count = count

    def on_iopub(self, msg: dict[str, Any]) -> None:
        """Take one iopub message (stream, results, displays, errors, status)."""
        if not self._ours(msg):
            return
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            target = self.stderr if content.get("name") == "stderr" else self.stdout
            target.write(content.get("text", ""))
        elif kind == "execute_input":
            count = content.get("execution_count")
            if isinstance(count, int):
                self.execution_count = count
        elif kind == "execute_result":
            data = content.get("data", {})
            if "text/plain" in data:
                self.result_text = truncate_middle(str(data["text/plain"]), self.max_chars)
            self._display(data)
        elif kind == "display_data":
            self._display(content.get("data", {}))
        elif kind == "error":
            self.error = _error_info(content)
        elif kind == "status" and content.get("execution_state") == "idle":
            self.idle = True

    def _display(self, data: dict[str, Any]) -> None:
        private = [m for m in data if m.startswith(PRIVATE_MIME_PREFIX)]
        if private:
            self.private.extend({"mime": m, "data": data[m]} for m in private)
            return
        kept = {m: v for m, v in data.items() if m in KEPT_MIMES}
        for mime in ("text/plain", "text/html"):
            if isinstance(kept.get(mime), str):
                kept[mime] = truncate_middle(kept[mime], self.max_chars)
        if kept:
            self.displays.append(DisplayData(data=kept))

    def result(
        self,
        forced_status: ExecutionStatus | None,
        forced_error: ErrorInfo | None,
        wall_time: float,
        execution_count: int | None,
    ) -> ExecutionResult:
        """Build the result; `forced_status`/`forced_error` override the kernel's verdict."""
        status: ExecutionStatus | None = forced_status
        error = forced_error
        if status is None:
            reply_status = (self.reply or {}).get("status", "ok")
            if reply_status == "ok":
                status = "ok"
            else:
                status = "error"
                error = self.error or _error_info(self.reply or {})
                if reply_status == "aborted":
                    error = ErrorInfo(
                        ename="Aborted", evalue="the kernel aborted this request", traceback=[]
                    )
        return ExecutionResult(
            status=status,
            stdout=self.stdout.getvalue(),
            stderr=self.stderr.getvalue(),
            result=self.result_text,
            displays=self.displays,
            error=error,
            wall_time=wall_time,
            execution_count=execution_count,
            private=self.private,
        )


def _error_info(content: dict[str, Any]) -> ErrorInfo:
    return ErrorInfo(
        ename=str(content.get("ename", "Error")),
        evalue=strip_ansi(str(content.get("evalue", ""))),
        traceback=[strip_ansi(line) for line in content.get("traceback", [])],
    )
