"""Beacons: Redis keys that say "a process is at work here" for as long as that process lives.

A beacon is a key with a short TTL that a background thread of its process
renews every third of the TTL. When the process ends in any way (killed,
crashed, machine restarted), the key goes out by itself within one TTL, so
another process can tell a live run from an orphaned one without asking it:

- ``flows:alive:<run_id>``          the process that runs the ``retrieve`` flow (flows.crashes)
- ``flows:waiting:<flow_run_id>``   the process that waits in a paused sub-flow (flows.pauses)

A Redis restart does not put out a live beacon for good: the renewing thread
lights it again as soon as Redis answers (its client rides out the restart),
and whoever reads beacons waits one TTL after a restart before trusting an
absence (:func:`redis_uptime_s`).
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

import redis

__all__ = ["Beacon", "redis_uptime_s"]

log = logging.getLogger(__name__)


class Beacon:
    """Keeps ``key`` set to ``value`` while the ``with`` block runs in this process."""

    def __init__(self, client: redis.Redis[bytes], key: str | None, value: str,
                 ttl_s: float) -> None:
        self._redis, self._key, self._value = client, key, value
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, daemon=True, name=f"beacon {key}")

    def __enter__(self) -> Beacon:
        if self._key is not None:  # None: nothing to say (e.g. not inside a flow run)
            self._light()
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self._key is not None:
            try:
                self._redis.delete(self._key)
            except redis.RedisError as error:
                log.warning("could not put out %s (it expires by itself): %s", self._key, error)

    def _light(self) -> None:
        if self._key is not None:
            self._redis.set(self._key, self._value, px=self._ttl_ms)

    def _renew(self) -> None:
        while not self._stop.wait(self._ttl_ms / 3000):
            try:
                self._light()
            except redis.RedisError as error:  # Redis restarting: light it again next time
                log.warning("could not renew %s: %s", self._key, error)


def redis_uptime_s(client: redis.Redis[bytes]) -> float:
    """How long the Redis server has been up: beacons are lit again within one TTL of a restart."""
    return float(client.info("server")["uptime_in_seconds"])
