"""Restart Redis under an idle farm: the worker reconnects and takes new sub-tasks by itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from droidretriever.testing import RedisServer
from tasks.worker import FarmClient, create_celery_app
from tasks.worker.farm_tasks import DIAGNOSE, DiagnoseRequest, DiagnoseResult
from tests.support.example_apps import example_catalog
from tests.support.farm import (
    FarmProcesses,
    farm_env,
    farm_settings,
    wait_for_idle,
    wait_until,
)


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server this test may stop and start again on the same port."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_worker_reconnects_after_redis_restart(own_redis: RedisServer, tmp_path: Path) -> None:
    env = farm_env(own_redis.url, tmp_path / "state")
    settings = farm_settings(env)
    with SimServer(phones=1, port=0, seed=7, catalog=example_catalog()) as sim:
        serial = sim.serials[0]
        procs = FarmProcesses(tmp_path / "state", env, sim.port)
        registry = DeviceRegistry.from_settings(settings)
        app = create_celery_app(settings)
        try:
            procs.start_worker(serial)
            wait_for_idle(registry, [serial], procs, timeout_s=90)
            client = FarmClient(app)
            assert client.send_to_device(DIAGNOSE, serial, DiagnoseRequest(),
                                         DiagnoseResult).get(timeout=30).serial == serial

            own_redis.stop()  # an empty Redis comes back: no registry, no queues
            own_redis.start()

            # The heartbeat re-registers the phone, and the worker consumes again.
            wait_until(lambda: serial in registry.serials(), 30, "re-registration")
            assert registry.status(serial).state is DeviceState.IDLE
            result = client.send_to_device(DIAGNOSE, serial, DiagnoseRequest(),
                                           DiagnoseResult).get(timeout=60)
            assert result.serial == serial
        finally:
            procs.stop()
            app.close()
