"""A dead phone is not offered: the pause queue leaves out pauses on phones that are down, and the
farm monitor tells the phone's run and repairs its worker, with backoff, on a real Redis."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from core.config import RedisSettings
from core.models import RunEvent, RunEventKind, new_id
from core.redis_client import BACKOFF_CAP_S, open_redis
from device_farm.health import find_down_phones
from device_farm.models import DeviceInfo, DeviceState
from device_farm.registry import DeviceRegistry
from flows.keys import waiting_key
from flows.pause_queue import PauseEntry, PauseQueue
from tasks.worker import create_celery_app
from tasks.worker.farm_monitor import REPAIR_BACKOFF_S, FarmMonitor
from tests.support.farm import farm_env, farm_settings, own_database

pytestmark = [pytest.mark.services]

UP, DEAD, SICK, UNKNOWN = "phone-up", "phone-dead", "phone-sick", "phone-unknown"
PHONE_LOSS_DB = 8


@pytest.fixture()
def redis_url(redis_url: str) -> str:
    """Its own database: the package's flow farm beats on database 0, which these tests flush."""
    return own_database(redis_url, PHONE_LOSS_DB)


@pytest.fixture()
def registry(redis_url: str, tmp_path: Path) -> Iterator[DeviceRegistry]:
    """Three registered phones: one beating, one whose worker stopped beating, one quarantined."""
    open_redis(RedisSettings(url=redis_url)).flushdb()
    registry = DeviceRegistry.from_settings(farm_settings(farm_env(redis_url, tmp_path)))
    for serial in (UP, DEAD, SICK):
        registry.register(DeviceInfo(serial=serial, width=1080, height=2340), worker=f"w-{serial}")
    registry.client.delete(f"farm:heartbeat:{DEAD}")
    registry.set_state(SICK, DeviceState.QUARANTINED, "adb no longer lists it")
    yield registry
    registry.client.flushdb()


def _pause(client_registry: DeviceRegistry, serial: str, run_id: str) -> PauseEntry:
    entry = PauseEntry(flow_run_id=new_id("flow"), run_id=run_id, subtask_id="s1",
                       app_label="Gmail", package="com.google.android.gm", serial=serial,
                       reason="the app asks for a password")
    client_registry.client.set(waiting_key(entry.flow_run_id), run_id, ex=60)  # a process waits
    PauseQueue(client_registry.client).open(entry)
    return entry


def test_down_phones_are_named_with_why_and_unknown_ones_are_not(registry: DeviceRegistry) -> None:
    down = find_down_phones(registry.client, [UP, DEAD, SICK, UNKNOWN])
    assert set(down) == {DEAD, SICK}
    assert "stopped beating" in down[DEAD]
    assert down[SICK] == "adb no longer lists it"


def test_the_queue_offers_no_pause_on_a_down_phone(registry: DeviceRegistry) -> None:
    run_id = new_id("run")
    kept = [_pause(registry, serial, run_id) for serial in (UP, UNKNOWN)]
    for serial in (DEAD, SICK):
        _pause(registry, serial, run_id)
    queue = PauseQueue(registry.client)
    assert {e.serial for e in queue.for_run(run_id)} == {e.serial for e in kept}
    registry.heartbeat(DEAD)  # its worker is back: its pause is offered again
    assert {e.serial for e in queue.for_run(run_id)} == {UP, UNKNOWN, DEAD}


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Events:
    """A recording event sink (the monitor publishes through this seam)."""

    def __init__(self) -> None:
        self.published: list[RunEvent] = []

    def publish(self, event: RunEvent) -> RunEvent:
        self.published.append(event)
        return event


def test_the_monitor_tells_the_run_and_repairs_the_worker_with_backoff(
        registry: DeviceRegistry, redis_url: str, tmp_path: Path) -> None:
    run_id = new_id("run")
    registry.client.delete(f"farm:heartbeat:{DEAD}")
    registry.leases.acquire(DEAD, run_id)
    clock, events = _Clock(), _Events()
    asked: list[tuple[str, float]] = []

    def repair(serial: str) -> str | None:
        asked.append((serial, clock.now))
        return f"started the worker of {serial} again"

    settings = farm_settings(farm_env(redis_url, tmp_path))
    monitor = FarmMonitor(create_celery_app(settings), registry, events=events, repair=repair,
                          clock=clock)
    step = registry.heartbeat_ttl_s / 4  # checks closer than half a TTL: Redis stays in sight

    def watch_for(seconds: float) -> None:
        for _ in range(round(seconds / step)):
            clock.now += step
            registry.heartbeat(UP)
            monitor.check_once()

    watch_for(registry.heartbeat_ttl_s + BACKOFF_CAP_S + step)  # until missing beats count
    assert [(e.run_id, e.kind) for e in events.published] == [(run_id, RunEventKind.PHONE_LOST)]
    assert events.published[0].message.startswith(f"{DEAD} is down: missed heartbeats")
    assert registry.status(DEAD).state is DeviceState.OFFLINE
    assert [serial for serial, _ in asked] == [DEAD]  # the quarantined phone's worker beats
    watch_for(4 * REPAIR_BACKOFF_S)  # the worker stays dead: asked again, each wait doubled
    assert len(events.published) == 1  # the run is told once
    assert [serial for serial, _ in asked] == [DEAD] * 3
    gaps = [later - earlier for (_, earlier), (_, later) in pairwise(asked)]
    assert REPAIR_BACKOFF_S <= gaps[0] < REPAIR_BACKOFF_S + 2 * step, gaps
    assert 2 * REPAIR_BACKOFF_S <= gaps[1] < 2 * REPAIR_BACKOFF_S + 2 * step, gaps


def test_a_phone_dying_while_the_monitor_starts_is_told_to_its_run(
        registry: DeviceRegistry, redis_url: str, tmp_path: Path) -> None:
    """The monitor learns whose run a beating phone serves from its first check, though missing
    beats count only later: a worker killed in that window, its lease expired by then, is still
    told to the run."""
    run_id = new_id("run")
    registry.leases.acquire(UP, run_id)
    clock, events = _Clock(), _Events()
    monitor = FarmMonitor(create_celery_app(farm_settings(farm_env(redis_url, tmp_path))),
                          registry, events=events, clock=clock)
    monitor.check_once()  # just started: UP beats, leased to the run
    registry.client.delete(f"farm:heartbeat:{UP}")  # its worker is killed ...
    registry.leases.release(UP, run_id)  # ... and its lease runs out before beats count
    step = registry.heartbeat_ttl_s / 4
    for _ in range(round((registry.heartbeat_ttl_s + BACKOFF_CAP_S) / step) + 1):
        clock.now += step
        monitor.check_once()
    assert [(e.run_id, e.kind) for e in events.published] == [(run_id, RunEventKind.PHONE_LOST)]
    assert events.published[0].message.startswith(f"{UP} is down: missed heartbeats")
