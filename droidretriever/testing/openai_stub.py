"""A scripted OpenAI-compatible HTTP server for tests: a test double, named as one.

It is a real HTTP server on a free loopback port implementing
``POST /v1/chat/completions``. Each request pops the next scripted reply from a
queue (content, HTTP status, token counts, an optional delay to provoke client
timeouts) and every request body is recorded for assertions. An empty queue
answers HTTP 500 with a message saying so, so a test that under-scripts fails
loudly instead of hanging.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from droidretriever.testing.loopback import send_json, start_loopback, stop_loopback

__all__ = ["OpenAIStub", "ScriptedReply"]


@dataclass(frozen=True)
class ScriptedReply:
    """What the stub answers to one request."""

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    prompt_tokens: int = 100
    completion_tokens: int = 20
    include_usage: bool = True
    finish_reason: str = "stop"


@dataclass
class OpenAIStub:
    """Context manager: ``with OpenAIStub() as stub: stub.enqueue(...); stub.base_url``."""

    model: str = "stub-model"
    requests: list[dict[str, Any]] = field(default_factory=list)
    _queue: deque[ScriptedReply] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def enqueue(self, *replies: ScriptedReply | str) -> None:
        """Queue replies; a plain string is a 200 answer with that content."""
        with self._lock:
            for reply in replies:
                self._queue.append(ScriptedReply(content=reply) if isinstance(reply, str) else reply)

    def answer(self, body: dict[str, Any]) -> ScriptedReply | None:
        """The reply to one request: the next scripted one (None when none is left).

        Doubles that answer by what they are sent (a hostile navigator) override this.
        """
        with self._lock:
            return self._queue.popleft() if self._queue else None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub is not running: use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def __enter__(self) -> Self:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output clean

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with stub._lock:
                    stub.requests.append(body)
                reply = stub.answer(body)
                if reply is None:
                    self._send(500, {"error": {"message": "OpenAIStub has no scripted reply left"}})
                    return
                if reply.delay_s and stub._stopping.wait(reply.delay_s):
                    return  # shutting down: drop the answer
                if reply.status != 200:
                    self._send(reply.status, {"error": {"message": reply.content or "scripted error"}})
                    return
                self._send(200, stub._completion(reply, body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                send_json(self, status, payload)

        self._server, self._thread = start_loopback(Handler)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        stop_loopback(self._server, self._thread)

    def _completion(self, reply: ScriptedReply, body: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "id": f"chatcmpl-stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
        }
        if reply.include_usage:
            answer["usage"] = {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            }
        return answer
