"""The farm monitor: notices dead workers and redelivers their sub-tasks at once.

A worker killed outright (SIGKILL, power cut) cannot reject its message; with
``acks_late`` the message waits in the broker's ``unacked`` set until the
visibility timeout (hours, so that long paused sub-tasks are never delivered
twice). The monitor watches heartbeats instead: when a phone's heartbeat is
missing and its worker had a sub-task in flight, that one message is put back
on its queue for another phone with the app, and the phone is marked offline.

A missing heartbeat means a dead worker only where Redis was there to take it.
A Redis that stopped for longer than the heartbeat TTL loses every heartbeat at
once, while every worker goes on with its sub-task and beats again as soon as
its client reconnects (its retry waits at most ``BACKOFF_CAP_S``). So after the
monitor loses sight of Redis (a check blocked or failed for more than half a
TTL), and when it starts, it waits a heartbeat TTL plus that reconnect time of
continuous sight before it takes a missing heartbeat for a dead worker;
otherwise it would hand a live worker's sub-task to a second phone.

Run it with ``python -m tasks.worker.farm_monitor`` (``farm up`` starts it).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import redis
from celery import Celery

from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from droidretriever.config import Settings, load_settings
from droidretriever.redis_client import BACKOFF_CAP_S
from tasks.worker.celery_app import create_celery_app

__all__ = ["FarmMonitor", "main", "run_monitor"]

log = logging.getLogger(__name__)


class FarmMonitor:
    """One pass (:meth:`check_once`) or a loop (:meth:`run_forever`) over the registry."""

    def __init__(self, app: Celery, registry: DeviceRegistry, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._app = app
        self._registry = registry
        self._clock = clock
        self._sight_since: float | None = None  # since when Redis answered every check
        self._last_sight: float | None = None

    def check_once(self) -> tuple[str, ...]:
        """Mark phones with missed heartbeats offline; return ids of redelivered tasks."""
        statuses = self._registry.statuses()
        if not self._heartbeats_conclusive():
            return ()
        redelivered: list[str] = []
        for status in statuses:
            if status.heartbeat_alive:
                continue
            serial = status.info.serial
            if status.state is DeviceState.OFFLINE and status.inflight is None:
                continue
            inflight = self._registry.take_inflight(serial)
            reason = f"missed heartbeats (worker {status.worker or '?'} gone)"
            self._registry.set_state(serial, DeviceState.OFFLINE, reason)
            if inflight is not None and self.restore_message(inflight.task_id):
                log.warning("redelivered %s (%s) from dead worker of %s",
                            inflight.task_id, inflight.task_name, serial)
                redelivered.append(inflight.task_id)
        return tuple(redelivered)

    def _heartbeats_conclusive(self) -> bool:
        """Whether a heartbeat missing now means a dead worker (see the module doc).

        Called right after a check read Redis: a gap of more than half a TTL since the
        last such read is a spell without sight of Redis, after which heartbeats count
        again once live workers have had a TTL plus a reconnect to beat.
        """
        now = self._clock()
        ttl = self._registry.heartbeat_ttl_s
        last, self._last_sight = self._last_sight, now
        if self._sight_since is None or last is None or now - last > ttl / 2:
            if last is not None:
                log.info("Redis answers again after %.1f s: missed heartbeats count in %.0f s",
                         now - last, ttl + BACKOFF_CAP_S)
            self._sight_since = now
        return now - self._sight_since >= ttl + BACKOFF_CAP_S

    def restore_message(self, task_id: str) -> bool:
        """Put the unacknowledged message of ``task_id`` back at the head of its queue."""
        with self._app.connection_for_write() as conn:
            channel: Any = conn.default_channel
            client = channel.client
            for tag, raw in client.hgetall(channel.unacked_key).items():
                message, _exchange, _routing_key = json.loads(raw)
                if message.get("headers", {}).get("id") == task_id:
                    channel.qos.restore_by_tag(tag, client=client, leftmost=True)
                    return True
        return False

    def run_forever(self, interval_s: float) -> None:
        """Check every ``interval_s`` until interrupted; Redis outages are waited out."""
        while True:
            try:
                self.check_once()
            except redis.RedisError as exc:
                log.warning("farm monitor cannot reach Redis: %s", exc)
            time.sleep(interval_s)


def run_monitor(settings: Settings) -> None:
    """Build the monitor from settings and run it."""
    monitor = FarmMonitor(create_celery_app(settings), DeviceRegistry.from_settings(settings))
    monitor.run_forever(settings.farm.heartbeat_s / 2)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m tasks.worker.farm_monitor``."""
    parser = argparse.ArgumentParser(description="Redeliver sub-tasks of dead device workers.")
    parser.add_argument("--loglevel", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.loglevel, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    run_monitor(load_settings())


if __name__ == "__main__":
    main()
