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

A run whose phone went down is told at once (a ``phone_lost`` event: the run the
phone was leased to, as last seen while it beat), and again when its redelivered
sub-task runs on a phone (``subtask_moved``, naming it). The monitor also repairs:
given a ``repair`` hook, it calls it for each phone whose worker is gone, at most
once per backoff (doubling from ``REPAIR_BACKOFF_S`` up to ``REPAIR_BACKOFF_MAX_S``
while the restarted worker keeps dying); the local farm's hook starts the worker
process again (:mod:`deploy.farm.monitor`), so ``droidretriever up`` is not needed.

Run it with ``python -m tasks.worker.farm_monitor`` (compose and Kubernetes, whose
restart policies restart workers); ``farm up`` runs ``python -m deploy.farm.monitor``.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from celery import Celery

from core.config import Settings, load_settings
from core.models import RunEvent, RunEventKind
from core.redis_client import BACKOFF_CAP_S
from device_farm.models import DeviceState, DeviceStatus
from device_farm.registry import DeviceRegistry
from storage import RunEventPublisher, StorageError, open_object_store
from tasks.navigate.copilot import EventSink
from tasks.worker.celery_app import create_celery_app

__all__ = ["REPAIR_BACKOFF_MAX_S", "REPAIR_BACKOFF_S", "FarmMonitor", "Repair", "build_monitor",
           "main", "run_monitor"]

log = logging.getLogger(__name__)

REPAIR_BACKOFF_S = 5.0
REPAIR_BACKOFF_MAX_S = 300.0
_MOVED_FORGET_S = 3600.0  # a redelivered sub-task nobody took within this is not announced

# Repairs a phone whose worker is gone: what it did, in words, or None when there was nothing
# to do (its worker process runs, perhaps still starting, or the farm does not know it).
Repair = Callable[[str], str | None]


@dataclass
class _Moved:
    """A redelivered sub-task: its run, the phone it lost, when."""

    run_id: str
    lost: str
    at: float


@dataclass
class _Repairs:
    """One phone's repairs since it last beat."""

    tries: int = 0
    last: float = 0.0


class FarmMonitor:
    """One pass (:meth:`check_once`) or a loop (:meth:`run_forever`) over the registry."""

    def __init__(self, app: Celery, registry: DeviceRegistry, *, events: EventSink | None = None,
                 repair: Repair | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._app = app
        self._registry = registry
        self._events = events
        self._repair = repair
        self._clock = clock
        self._sight_since: float | None = None  # since when Redis answered every check
        self._last_sight: float | None = None
        self._runs: dict[str, str] = {}  # serial -> the run it was leased to, seen while it beat
        self._moved: dict[str, _Moved] = {}  # redelivered task id -> whose, from where
        self._repairs: dict[str, _Repairs] = {}
        self._down: set[str] = set()  # phones taken down since they last beat
        self._told: dict[str, str] = {}  # serial -> the run told it went down (told when back)

    def check_once(self) -> tuple[str, ...]:
        """Mark phones with missed heartbeats offline, tell their runs, repair their workers;
        return ids of redelivered tasks."""
        statuses = self._registry.statuses()
        conclusive = self._heartbeats_conclusive()
        redelivered: list[str] = []
        for status in statuses:
            if status.heartbeat_alive:
                # A beat is proof of life even while a missing one is not proof of death: the
                # run a phone is leased to is learnt from the first check, so a phone that dies
                # while the monitor is starting is still told to its run (whose lease may have
                # expired by the time its missing beats count).
                self._note_alive(status)
                continue
            if not conclusive:
                continue
            # The registry shows a silent phone offline already: whether it was taken down
            # (its run told) is the monitor's own memory.
            if status.info.serial not in self._down or status.inflight is not None:
                redelivered.extend(self._take_down(status))
            self._repair_worker(status.info.serial)
        return tuple(redelivered)

    def _note_alive(self, status: DeviceStatus) -> None:
        serial = status.info.serial
        self._repairs.pop(serial, None)
        self._down.discard(serial)
        told = self._told.pop(serial, None)
        if told is not None:  # it came back (its worker restarted): its run may go on there
            self._tell(told, RunEventKind.SUBTASK_MOVED,
                       f"{serial} is back (the farm restarted its worker): the run can go on there")
        if status.lease_run:
            self._runs[serial] = status.lease_run
        else:
            self._runs.pop(serial, None)
        now = self._clock()
        self._moved = {k: v for k, v in self._moved.items() if now - v.at < _MOVED_FORGET_S}
        moved = self._moved.pop(status.inflight.task_id, None) if status.inflight else None
        if moved is not None:
            where = ("again (the farm restarted its worker)" if moved.lost == serial
                     else f"(instead of {moved.lost})")
            self._tell(moved.run_id, RunEventKind.SUBTASK_MOVED,
                       f"the sub-task {moved.lost} had goes on on {serial} {where}")

    def _take_down(self, status: DeviceStatus) -> list[str]:
        """Mark the phone offline, put its sub-task back, tell its run; ids redelivered."""
        serial = status.info.serial
        first = serial not in self._down
        self._down.add(serial)
        inflight = self._registry.take_inflight(serial)
        reason = f"missed heartbeats (worker {status.worker or '?'} gone)"
        self._registry.set_state(serial, DeviceState.OFFLINE, reason)
        run_id = self._runs.pop(serial, None) or status.lease_run
        restored = inflight is not None and self.restore_message(inflight.task_id)
        if inflight is not None and restored:
            log.warning("redelivered %s (%s) from dead worker of %s",
                        inflight.task_id, inflight.task_name, serial)
            if run_id is not None:
                self._moved[inflight.task_id] = _Moved(run_id, serial, self._clock())
        if run_id is not None and (first or restored):
            then = (f"its sub-task goes back to the queue: another phone with the app takes it, "
                    f"or {serial} once the farm has restarted its worker") if restored else (
                    "the farm restarts its worker")
            self._tell(run_id, RunEventKind.PHONE_LOST, f"{serial} is down: {reason}; {then}")
            self._told[serial] = run_id
        return [inflight.task_id] if inflight is not None and restored else []

    def _repair_worker(self, serial: str) -> None:
        if self._repair is None:
            return
        repairs = self._repairs.setdefault(serial, _Repairs())
        wait = min(REPAIR_BACKOFF_MAX_S, REPAIR_BACKOFF_S * 2 ** max(0, repairs.tries - 1))
        now = self._clock()
        if repairs.tries and now - repairs.last < wait:
            return
        try:
            done = self._repair(serial)
        except Exception as exc:  # a repair that fails must not stop the monitor
            log.warning("could not repair the worker of %s: %s", serial, exc)
            done = None
        if done is not None:
            repairs.tries, repairs.last = repairs.tries + 1, now
            log.warning("%s: %s", serial, done)

    def _tell(self, run_id: str, kind: RunEventKind, message: str) -> None:
        if self._events is None:
            return
        try:
            self._events.publish(RunEvent(run_id=run_id, kind=kind, message=message))
        except StorageError as exc:
            log.warning("could not tell run %s that %s: %s", run_id, message, exc)

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


def build_monitor(settings: Settings, repair: Repair | None = None) -> FarmMonitor:
    """The monitor on ``settings``' Redis, telling runs through their event streams."""
    registry = DeviceRegistry.from_settings(settings)
    events: RunEventPublisher | None
    try:
        events = RunEventPublisher(registry.client, open_object_store(settings), flush_every=1)
    except StorageError as exc:
        # Its first job, putting a dead worker's sub-task back, needs no object store: it goes on,
        # and says once that runs are not told of their dead phones until the store is set up.
        log.warning("farm monitor: runs are not told of dead phones (no object store: %s)", exc)
        events = None
    return FarmMonitor(create_celery_app(settings), registry, events=events, repair=repair)


def run_monitor(settings: Settings, repair: Repair | None = None) -> None:
    """Build the monitor from settings and run it."""
    build_monitor(settings, repair).run_forever(settings.farm.heartbeat_s / 2)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m tasks.worker.farm_monitor``."""
    parser = argparse.ArgumentParser(description="Redeliver sub-tasks of dead device workers.")
    parser.add_argument("--loglevel", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.loglevel, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    run_monitor(load_settings())


if __name__ == "__main__":
    main()
