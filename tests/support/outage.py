"""``OutageProxy``: a test double of an overloaded server, a TCP proxy that can fail for a while.

    with OutageProxy("127.0.0.1", 4200) as proxy:     # clients use proxy.url("/api")
        proxy.fail_for(6.0)                            # 6 s of "503 Service Unavailable"

Bytes pass through unchanged (HTTP, websockets) until ``fail_for``: then every open
connection is cut and every new one is answered ``503 Service Unavailable`` and closed, as
the embedded Prefect server answered under the state writes of 16 phones' runs.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType

__all__ = ["OutageProxy"]

_UNAVAILABLE = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                b"Content-Length: 33\r\nConnection: close\r\n\r\n"
                b'{"detail": "Service Unavailable"}')


class OutageProxy:
    """Forwards a loopback port to ``host:port``; :meth:`fail_for` makes it fail for a while."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._failing_until = 0.0
        self.refused = 0  # connections answered 503
        self._closed = False

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def fail_for(self, seconds: float) -> None:
        """Cut every open connection; answer 503 to new ones for ``seconds``."""
        with self._lock:
            self._failing_until = time.monotonic() + seconds
            cut, self._open = self._open, set()
        for sock in cut:
            _close(sock)

    def __enter__(self) -> OutageProxy:
        threading.Thread(target=self._accept, name="outage-proxy", daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._closed = True
        _close(self._listener)
        self.fail_for(0.0)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        if time.monotonic() < self._failing_until:
            with self._lock:
                self.refused += 1
            try:
                client.recv(65536)  # the request, so that the client reads the answer
                client.sendall(_UNAVAILABLE)
            except OSError:
                pass
            _close(client)
            return
        try:
            server = socket.create_connection(self._target, timeout=10)
        except OSError:
            _close(client)
            return
        server.settimeout(None)
        with self._lock:
            self._open |= {client, server}
        threading.Thread(target=_pipe, args=(server, client), daemon=True).start()
        _pipe(client, server)

    def __repr__(self) -> str:
        return f"OutageProxy(:{self.port} -> {self._target[0]}:{self._target[1]})"


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    _close(source)
    _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
