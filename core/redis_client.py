"""Redis clients, built from the settings only, that ride out a restart of the server.

Every process (flows, device workers, the farm monitor, the CLI) reaches Redis
through :func:`open_redis`, so the one policy for a Redis that does not answer
lives here (docs/architecture.md "Faults": small bounded retries inside the adapter): a refused or
dropped connection, a timeout, or a server still loading its append-only file
is retried with exponential backoff and equal jitter (redis-py's own ``Retry``)
until ``redis.retry_window_s`` has passed at the least, then raised. A restart of
up to a minute is therefore invisible to callers: the command simply takes
longer. Health checks and ``status`` pass ``retry_window_s=0`` to fail at once.
"""

from __future__ import annotations

import socket

import redis
from redis.backoff import EqualJitterBackoff
from redis.exceptions import BusyLoadingError
from redis.retry import Retry

from core.config import RedisSettings

__all__ = ["BACKOFF_BASE_S", "BACKOFF_CAP_S", "open_redis", "restart_retry", "retries_for_window"]

BACKOFF_BASE_S = 0.1  # the first retry waits 0.1-0.2 s: a dropped connection is often back at once
BACKOFF_CAP_S = 4.0  # then it doubles up to a wait of 2-4 s between tries

_TRANSIENT = (redis.ConnectionError, redis.TimeoutError, socket.timeout, BusyLoadingError)


def retries_for_window(window_s: float) -> int:
    """How many retries wait at least ``window_s`` in all, with the least jitter each time.

    Equal jitter waits between half and all of ``min(cap, base * 2**n)`` before retry
    ``n``; counting the half makes the window a lower bound, whatever the jitter draws.
    """
    retries, waited = 0, 0.0
    while waited < window_s:
        retries += 1
        waited += min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**retries) / 2
    return retries


def restart_retry(window_s: float) -> Retry:
    """redis-py's retry policy that keeps trying for ``window_s`` (none when 0)."""
    return Retry(EqualJitterBackoff(cap=BACKOFF_CAP_S, base=BACKOFF_BASE_S),
                 retries_for_window(window_s), supported_errors=_TRANSIENT)


def open_redis(settings: RedisSettings, *, retry_window_s: float | None = None,
               read_timeout_s: float = 10.0) -> redis.Redis[bytes]:
    """A client for ``settings.url`` (bytes responses; each caller owns its client).

    ``retry_window_s`` overrides ``settings.retry_window_s``: 0 for a check that
    must answer now (health, ``status``).
    """
    window = settings.retry_window_s if retry_window_s is None else retry_window_s
    return redis.Redis.from_url(
        settings.url, socket_connect_timeout=2.0, socket_timeout=read_timeout_s,
        socket_keepalive=True, health_check_interval=15, retry=restart_retry(window),
    )
