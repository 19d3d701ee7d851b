"""Ask a service as a client without credentials would: is it refused?

``droidretriever status`` shows the answers (its ``credentials`` column), so a
person sees that no service of the stack is open; the same questions a
stranger on this machine could ask.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import ssl

import asyncpg
import httpx
import redis

__all__ = ["is_adb_refused", "is_http_refused", "is_postgres_refused", "is_redis_refused",
           "is_tls_refused"]

_TIMEOUT_S = 2.0
_NOBODY = 65534
_ADB_DEVICES = b"000chost:devices"
_ADB_ACCESS = b"000fhost:sim-access"


def is_redis_refused(host: str, port: int) -> bool | None:
    """Whether Redis refuses a PING without a password; None when it does not answer at all."""
    client = redis.Redis(host=host, port=port, socket_connect_timeout=_TIMEOUT_S,
                         socket_timeout=_TIMEOUT_S)
    try:
        client.ping()
    except redis.AuthenticationError:
        return True
    except redis.ResponseError as exc:  # NOAUTH on older servers
        return "NOAUTH" in str(exc)
    except redis.RedisError:
        return None
    finally:
        client.close()
    return False


def is_postgres_refused(host: str, port: int, user: str) -> bool | None:
    """Whether PostgreSQL refuses ``user`` without the password (a wrong one is given);
    None when nothing answers."""

    async def log_in() -> None:
        connection = await asyncpg.connect(host=host, port=port, user=user, database="postgres",
                                           password=secrets.token_urlsafe(16), timeout=_TIMEOUT_S)
        await connection.close()

    try:
        asyncio.run(log_in())
    except asyncpg.InvalidAuthorizationSpecificationError:  # a wrong password, or no entry
        return True
    except (OSError, TimeoutError, asyncpg.PostgresError):
        return None
    return False


def is_http_refused(method: str, url: str) -> bool | None:
    """Whether ``method url`` without credentials answers 401/403; None when nothing answers."""
    try:
        response = httpx.request(method, url, timeout=_TIMEOUT_S, json={} if method == "POST" else None)
    except httpx.HTTPError:
        return None
    return response.status_code in (401, 403)


def is_tls_refused(host: str, port: int) -> bool | None:
    """Whether a port refuses clients without a client certificate (plain HTTP and TLS alike).

    A plain request must not be served, and a TLS client that presents no
    certificate must not get an answer. None when nothing listens.
    """
    try:
        with socket.create_connection((host, port), timeout=_TIMEOUT_S) as sock:
            sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
            plain = sock.recv(64)
    except OSError:
        return None
    if plain.startswith(b"HTTP/") and b" 200 " in plain[:16]:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # we test the server's demand, not its certificate
    try:
        with socket.create_connection((host, port), timeout=_TIMEOUT_S) as sock, \
                context.wrap_socket(sock) as tls:
            tls.sendall(b"GET / HTTP/1.0\r\n\r\n")
            answer = tls.recv(64)
    except (ssl.SSLError, OSError):
        return True
    return not answer


def _adb_ask(host: str, port: int, request: bytes) -> bytes | None:
    """The reply's first bytes (``OKAY``/``FAIL`` + block) to one smart-socket request; None if none."""
    try:
        with socket.create_connection((host, port), timeout=_TIMEOUT_S) as sock:
            sock.sendall(request)
            return sock.recv(256)
    except OSError:
        return None


def _adb_as_stranger(host: str, port: int) -> bool | None:
    """Ask ``host:devices`` as user ``nobody`` (a forked child; needs root): refused?"""
    pid = os.fork()
    if pid == 0:  # the child only opens a socket and exits: safe after fork in a threaded process
        code = 2
        try:
            os.setgid(_NOBODY)
            os.setuid(_NOBODY)
            reply = _adb_ask(host, port, _ADB_DEVICES)
            code = 2 if not reply else (0 if reply.startswith(b"FAIL") else 1)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return {0: True, 1: False}.get(os.waitstatus_to_exitcode(status))


def is_adb_refused(host: str, port: int) -> bool | None:
    """Whether the virtual phones' ADB port refuses other users; None when nothing answers.

    As root the question is asked as ``nobody`` would ask it. Otherwise the
    port must at least answer as this user and state its rule
    (``host:sim-access``: ``owner-only``); a server that lists phones without
    stating it (an older simulator) counts as open.
    """
    if os.getuid() == 0:
        return _adb_as_stranger(host, port)
    reply = _adb_ask(host, port, _ADB_ACCESS)
    if reply is None:
        return None
    return reply.startswith(b"OKAY") and b"owner-only" in reply
