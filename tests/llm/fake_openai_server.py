"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (reusable by any package).

Usage::

    with FakeOpenAIServer(["first reply", FakeReply(status=500), "second"]) as server:
        model = OpenAIChatModel("fake-model", base_url=server.base_url)
        ...
        assert server.bodies[0]["model"] == "fake-model"

Replies are consumed one per ``POST /v1/chat/completions``; a callable
``fn(request_json) -> str | FakeReply`` may be given instead. Every request
is recorded before it is answered. When a reply list is exhausted the server
answers HTTP 400 naming the number of requests served. ``GET /v1/models``
lists the server's model. The server binds a free port and stops on exit.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@dataclass(frozen=True)
class FakeReply:
    """One scripted HTTP answer.

    ``status`` != 200 sends an OpenAI-style error body with ``error_message``.
    ``usage=None`` omits the usage block. ``body`` replaces the whole JSON
    body. ``delay`` sleeps before answering (to provoke client timeouts).
    """

    content: str = ""
    status: int = 200
    usage: dict[str, int] | None = field(default_factory=lambda: dict(DEFAULT_USAGE))
    finish_reason: str = "stop"
    error_message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    json: dict[str, Any] | None


ReplyFn = Callable[[dict[str, Any]], "str | FakeReply"]


class FakeOpenAIServer:
    """Threaded fake of the chat-completions endpoint; see the module docstring."""

    def __init__(
        self,
        replies: Sequence[str | FakeReply] | ReplyFn,
        *,
        model: str = "fake-model",
    ) -> None:
        """Prepare a server answering with ``replies`` (list or function)."""
        self._fn: ReplyFn | None = replies if callable(replies) else None
        self._replies: list[str | FakeReply] = [] if callable(replies) else list(replies)
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """Base URL to give an OpenAI client (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """JSON bodies of the chat-completion requests received, in order."""
        with self._lock:
            return self._chat_bodies()

    # -- request handling ----------------------------------------------------
    def _next_reply(self, body: dict[str, Any]) -> FakeReply:
        with self._lock:
            n = len(self._chat_bodies())  # includes the request being answered
            if self._fn is None:
                if n > len(self._replies):
                    return FakeReply(
                        status=400,
                        error_message=f"FakeOpenAIServer ran out of replies after {n - 1} requests",
                    )
                item = self._replies[n - 1]
            else:
                item = None
        if item is None:
            assert self._fn is not None
            item = self._fn(body)
        return FakeReply(content=item) if isinstance(item, str) else item

    def _chat_bodies(self) -> list[dict[str, Any]]:
        # Caller holds self._lock.
        return [
            r.json
            for r in self.requests
            if r.path.endswith("/chat/completions") and isinstance(r.json, dict)
        ]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _completion_body(self, reply: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
        if reply.body is not None:
            return reply.body
        out: dict[str, Any] = {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
        }
        if reply.usage is not None:
            out["usage"] = reply.usage
        return out


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def _headers(self) -> dict[str, str]:
            return {k.lower(): v for k, v in self.headers.items()}

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)  # fails only if the client gave up (its timeout fired)

        def do_GET(self) -> None:
            server._record(RecordedRequest("GET", self.path, self._headers(), None))
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": server.model}]}, {})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            server._record(RecordedRequest("POST", self.path, self._headers(), body))
            if not self.path.endswith("/chat/completions") or not isinstance(body, dict):
                self._send(404, {"error": {"message": f"bad request to {self.path}"}}, {})
                return
            reply = server._next_reply(body)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.status != 200:
                error = {"message": reply.error_message, "type": "fake_error", "code": None}
                self._send(reply.status, {"error": error}, reply.headers)
                return
            self._send(200, server._completion_body(reply, body), reply.headers)

    return Handler
