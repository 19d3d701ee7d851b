"""The farm monitor takes a missing heartbeat for a dead worker only where Redis was there to take it.

A real Redis with its append-only file (as the stack keeps it) is stopped for longer than the
heartbeat TTL and started again: every heartbeat is gone, while the phone's worker goes on with
its sub-task and beats again once its client reconnects. The monitor must not hand that
sub-task to a second phone (it ran twice in a run across a Redis restart). A worker that really
stops beating is still found dead.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis

from core.redis_client import BACKOFF_CAP_S
from device_farm.models import DeviceInfo, DeviceState, InflightTask
from device_farm.registry import DeviceRegistry
from droidretriever.testing import RedisServer
from tasks.worker import create_celery_app
from tasks.worker.farm_monitor import FarmMonitor
from tests.support.farm import farm_env, farm_settings, wait_until

pytestmark = [pytest.mark.services, pytest.mark.slow]

SERIAL = "phone-a"
TASK = InflightTask(task_id="task-1", task_name="copilot.navigate", queue="app.example",
                    started_at=datetime(2026, 11, 24, tzinfo=UTC))


@dataclass
class Watched:
    """A registered phone with a sub-task in flight, its worker's beats, and a monitor looping."""

    server: RedisServer
    registry: DeviceRegistry
    beating: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    redelivered: list[str] = field(default_factory=list)

    @property
    def settle_s(self) -> float:
        """How long the monitor watches before a missing heartbeat counts."""
        return self.registry.heartbeat_ttl_s + BACKOFF_CAP_S

    def beat_while_told(self, registry: DeviceRegistry) -> None:
        while not self.stop.wait(registry.heartbeat_ttl_s / 4):
            if self.beating.is_set():
                registry.heartbeat(SERIAL)

    def monitor(self, monitor: FarmMonitor, interval_s: float) -> None:
        while not self.stop.wait(interval_s):
            with contextlib.suppress(redis.RedisError):  # as run_forever: the next check retries
                self.redelivered.extend(monitor.check_once())


@pytest.fixture()
def watched(tmp_path: Path) -> Iterator[Watched]:
    server = RedisServer(tmp_path / "redis", persist=True)
    server.start()
    settings = farm_settings(farm_env(server.url, tmp_path / "state"))
    registry = DeviceRegistry.from_settings(settings)
    registry.register(DeviceInfo(serial=SERIAL, width=1080, height=2340), worker="w-a")
    registry.set_inflight(SERIAL, TASK)
    state = Watched(server, registry)
    state.beating.set()
    monitor = FarmMonitor(create_celery_app(settings), DeviceRegistry.from_settings(settings))
    threads = [
        threading.Thread(target=state.beat_while_told,
                         args=(DeviceRegistry.from_settings(settings),), daemon=True),
        threading.Thread(target=state.monitor, args=(monitor, settings.farm.heartbeat_s / 2),
                         daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        for thread in threads:
            thread.join(timeout=30)
        server.stop()


def test_heartbeats_lost_in_a_redis_restart_leave_a_live_workers_subtask_alone(
        watched: Watched) -> None:
    time.sleep(watched.settle_s + 1)  # the monitor has watched long enough to judge
    watched.beating.clear()
    watched.server.stop()
    time.sleep(watched.registry.heartbeat_ttl_s + 1)  # every heartbeat expires meanwhile
    watched.server.start()
    # The worker's client reconnects after a backoff within BACKOFF_CAP_S, then beats.
    time.sleep(BACKOFF_CAP_S / 2)
    watched.beating.set()
    time.sleep(watched.settle_s + 1)

    status = watched.registry.status(SERIAL)
    assert watched.redelivered == []
    assert status.inflight == TASK and status.state is DeviceState.IDLE


def test_a_worker_that_stops_beating_is_found_dead(watched: Watched) -> None:
    time.sleep(1)
    watched.beating.clear()
    wait_until(lambda: watched.registry.status(SERIAL).inflight is None,
               watched.settle_s + watched.registry.heartbeat_ttl_s + 10, "the sub-task taken back")
    status = watched.registry.status(SERIAL)
    assert status.state is DeviceState.OFFLINE and "missed heartbeats" in status.reason
