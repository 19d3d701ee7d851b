"""Keep the deliveries a live worker holds visible, so only a dead worker's go back.

The Redis broker keeps an unacknowledged message in ``unacked`` with the time it
was handed out in the sorted set ``unacked_index``; any worker's sweep puts a
message older than ``farm.visibility_timeout_s`` back on its queue. That timeout
is short (seconds), so a message whose worker died, even between receiving it
and the task's first line (before anything else knows of it), comes back at
once. A live worker must not lose its own: its heartbeat moves the time of
every message it received and has not acknowledged to now (:meth:`keep_visible`),
so a sub-task that runs for minutes or waits for a person keeps its message for
as long as its worker beats.

A message is known from the moment the consumer takes it (Celery's
``task_received``, after the broker recorded it), and forgotten once it has left
``unacked_index`` (acknowledged, rejected or put back): ``ZADD XX`` never adds a
message that has gone.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import redis
from celery.signals import task_received
from kombu.transport.redis import Channel

__all__ = ["HeldDeliveries"]


class HeldDeliveries:
    """The delivery tags this worker holds, renewed by :meth:`keep_visible`."""

    def __init__(self, index_key: str = Channel.unacked_index_key) -> None:
        self._index_key = index_key
        self._tags: set[str] = set()
        self._lock = threading.Lock()

    def listen(self) -> None:
        """Learn every message this process's consumer receives (a worker calls it once)."""
        task_received.connect(self._on_received, weak=False)

    def close(self) -> None:
        """Stop listening (worker shutdown)."""
        task_received.disconnect(self._on_received)

    def _on_received(self, sender: Any = None, request: Any = None, **_: Any) -> None:
        tag = getattr(getattr(request, "message", None), "delivery_tag", None)
        if tag:
            self.add(str(tag))

    def add(self, tag: str) -> None:
        """Hold ``tag`` (a message this worker has just received)."""
        with self._lock:
            self._tags.add(tag)

    @property
    def tags(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._tags)

    def keep_visible(self, client: redis.Redis[bytes]) -> int:
        """Mark every held message as handed out now; forget those that left. How many renewed."""
        tags = self.tags
        if not tags:
            return 0
        now = time.time()
        pipe = client.pipeline(transaction=False)
        for tag in tags:
            pipe.zadd(self._index_key, {tag: now}, xx=True, ch=True)
        renewed = dict(zip(tags, pipe.execute(), strict=True))
        gone = {tag for tag, changed in renewed.items() if not changed}
        if gone:
            with self._lock:
                self._tags -= gone
        return len(tags) - len(gone)
