"""A worker's phone across a pause, on a real Redis and a virtual phone (no Celery needed)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from core.config import BudgetSettings, FarmSettings, RedisSettings, load_settings
from core.models import InstalledApp
from core.redis_client import open_redis
from device_farm.adb_driver import AdbDriver
from device_farm.models import DeviceInfo, DeviceState
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from tasks.worker import BoundDevice
from tests.support.example_apps import example_catalog


@pytest.fixture()
def device(redis_url: str) -> Iterator[BoundDevice]:
    client = open_redis(RedisSettings(url=redis_url))
    client.flushdb()
    settings = load_settings(
        redis={"url": redis_url},
        farm=FarmSettings(heartbeat_s=0.1, lease_ttl_s=1.0),
        budgets=BudgetSettings(pause_timeout_s=1.5),
    )
    with SimServer(phones=1, port=0, seed=7, catalog=example_catalog()) as server:
        serial = server.serials[0]
        driver = AdbDriver(serial, port=server.port)
        info = DeviceInfo(serial=serial, width=1080, height=2340, adb_port=server.port,
                          apps=(InstalledApp(package="com.example.app", label="Example"),))
        registry = DeviceRegistry(client, settings.farm)
        registry.register(info, "worker@test")
        try:
            yield BoundDevice(settings, info, driver, registry)
        finally:
            driver.close()
            client.flushdb()
            client.close()


def test_a_paused_run_keeps_the_phone_beyond_its_lease_ttl(device: BoundDevice) -> None:
    device.begin_run("run-paused")
    device.hold_for_user()
    device.end_run()
    # Twice the lease TTL, within the pause timeout: each heartbeat renews the lease.
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        device.beat_once()
        time.sleep(0.1)
    assert device.registry.leases.holder(device.serial) == "run-paused"
    assert device.registry.status(device.serial).state is DeviceState.PAUSED_FOR_USER


def test_a_phone_whose_paused_run_never_returns_is_freed_after_the_pause_timeout(
    device: BoundDevice,
) -> None:
    device.begin_run("run-gone")
    paused_at = time.monotonic()
    device.hold_for_user()
    device.end_run()
    while device.run_id is not None and time.monotonic() - paused_at < 15:
        device.beat_once()
        time.sleep(0.1)
    # Not before the pause timeout (1.5 s) + 2 lease TTLs (1 s each): the flow may still resume.
    assert time.monotonic() - paused_at >= 3.5
    assert device.registry.leases.holder(device.serial) is None
    assert device.registry.status(device.serial).state is DeviceState.IDLE
    assert device.run_id is None


def test_a_paused_run_that_lets_go_frees_the_phone_at_the_next_beat(device: BoundDevice) -> None:
    device.begin_run("run-skipped")
    device.hold_for_user()
    device.end_run()
    device.registry.leases.release(device.serial, "run-skipped")  # skip, timeout, or `resume`
    device.beat_once()
    assert device.run_id is None
    assert device.registry.status(device.serial).state is DeviceState.IDLE
