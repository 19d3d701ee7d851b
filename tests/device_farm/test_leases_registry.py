"""Leases and the registry on a real Redis: expiry, renewal, exclusivity, offline on missed beats."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from core.config import FarmSettings, RedisSettings
from core.models import InstalledApp
from core.redis_client import open_redis
from device_farm.leases import LeaseManager
from device_farm.models import DeviceInfo, DeviceState, InflightTask
from device_farm.registry import DeviceRegistry


@pytest.fixture()
def registry(redis_url: str) -> Iterator[DeviceRegistry]:
    client = open_redis(RedisSettings(url=redis_url))
    client.flushdb()
    farm = FarmSettings(heartbeat_s=0.1, heartbeat_missed=3, lease_ttl_s=0.4)
    yield DeviceRegistry(client, farm)
    client.flushdb()
    client.close()


def _info(serial: str, *packages: str) -> DeviceInfo:
    return DeviceInfo(serial=serial, model="Pixel Sim", width=1080, height=2400,
                      apps=tuple(InstalledApp(package=p, label=p.rsplit(".", 1)[-1]) for p in packages))


def test_lease_is_exclusive_renewable_and_expires(registry: DeviceRegistry) -> None:
    leases = registry.leases
    assert leases.acquire("emulator-5554", "run-a")
    assert not leases.acquire("emulator-5554", "run-b")
    assert leases.holder("emulator-5554") == "run-a"
    # Renewal keeps it past several TTLs; the other run still cannot take it.
    for _ in range(4):
        time.sleep(0.2)
        assert leases.renew("emulator-5554", "run-a")
    assert not leases.renew("emulator-5554", "run-b")
    assert leases.holder("emulator-5554") == "run-a"
    # Not renewed: it expires and the phone is free for run-b.
    time.sleep(0.5)
    assert leases.holder("emulator-5554") is None
    assert not leases.renew("emulator-5554", "run-a")
    assert leases.acquire("emulator-5554", "run-b")
    assert not leases.release("emulator-5554", "run-a")  # cannot drop another run's lease
    assert leases.release("emulator-5554", "run-b")
    assert leases.holder("emulator-5554") is None


def test_two_runs_never_hold_the_same_phone(registry: DeviceRegistry) -> None:
    winners: list[str] = []
    barrier = threading.Barrier(16)
    # A TTL no loaded host outlasts between the first and the last thread (the fixture's 0.4 s
    # expired mid-race on a busy 2-core machine, and a second run rightly got the phone).
    leases = LeaseManager(registry.client, ttl_s=30.0)

    def contend(run: str) -> None:
        barrier.wait()
        if leases.acquire("emulator-5556", run):
            winners.append(run)

    threads = [threading.Thread(target=contend, args=(f"run-{i}",)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1
    assert registry.leases.holder("emulator-5556") == winners[0]


def test_registry_status_goes_offline_when_heartbeats_stop(registry: DeviceRegistry) -> None:
    registry.register(_info("emulator-5554", "com.sankuai.meituan", "com.android.settings"), "w1")
    status = registry.status("emulator-5554")
    assert status.state is DeviceState.IDLE and status.heartbeat_alive
    assert status.info.packages == ("com.sankuai.meituan", "com.android.settings")
    assert registry.devices_with_app("com.sankuai.meituan") == ("emulator-5554",)
    assert registry.devices_with_app("com.tencent.mm") == ()

    registry.record_task("emulator-5554", ok=True)
    registry.record_task("emulator-5554", ok=False)
    assert registry.record_observe("emulator-5554", ok=False) == 1
    assert registry.record_observe("emulator-5554", ok=False) == 2
    assert registry.record_observe("emulator-5554", ok=True) == 0
    time.sleep(0.45)  # three beats missed
    status = registry.status("emulator-5554")
    assert status.state is DeviceState.OFFLINE
    assert "no heartbeat" in status.reason
    assert (status.tasks_done, status.tasks_failed) == (1, 1)


def test_inflight_is_taken_once(registry: DeviceRegistry) -> None:
    registry.register(_info("emulator-5558", "com.example.a"), "w3")
    task = InflightTask(task_id="t-1", task_name="farm.synthetic", queue="app.com.example.a",
                        started_at=registry.last_heartbeat("emulator-5558") or pytest.fail())
    registry.set_inflight("emulator-5558", task)
    assert registry.status("emulator-5558").inflight == task
    assert registry.take_inflight("emulator-5558") == task
    assert registry.take_inflight("emulator-5558") is None


def test_quarantine_reason_is_kept_for_status(registry: DeviceRegistry) -> None:
    registry.register(_info("emulator-5560"), "w2")
    registry.set_state("emulator-5560", DeviceState.QUARANTINED, "observe failed 3 times in a row")
    status = registry.status("emulator-5560")
    assert status.state is DeviceState.QUARANTINED
    assert status.reason == "observe failed 3 times in a row"


def test_a_question_waits_for_phones_registering_again_after_redis_lost_them(
        registry: DeviceRegistry) -> None:
    """Redis flushed under a live farm: the next beat registers each phone again, and apps asked
    for in that window are the phones' apps, not "no phone online"."""
    assert registry.live_statuses_soon() == ()  # no phone at all: answers after the wait

    def beat_again() -> None:
        time.sleep(0.1)  # the worker's next beat (the fixture beats every 0.1 s)
        registry.register(_info("emulator-5554", "com.example.maps"), worker="w1")

    beater = threading.Thread(target=beat_again)
    beater.start()
    try:
        apps = registry.apps_of(registry.live_statuses_soon())
    finally:
        beater.join()
    assert [a.package for a in apps] == ["com.example.maps"]
