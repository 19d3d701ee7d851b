"""Restart Redis under an idle farm: the worker reconnects and takes new sub-tasks by itself."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from droidretriever.secrets import generate_secret
from droidretriever.testing import free_port, wait_for_port
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


class OwnRedis:
    """A redis-server this test may stop and start again on the same port."""

    def __init__(self, directory: Path) -> None:
        self.port, self.directory = free_port(), directory
        self.password = generate_secret()  # as `up` runs it: no Redis without a password
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server") or pytest.fail("redis-server is not installed")
        config = self.directory / "redis.conf"
        config.touch(mode=0o600)
        config.write_text(f'requirepass "{self.password}"\n')
        self.proc = subprocess.Popen(
            [binary, str(config), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.directory), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.stop()


def test_worker_reconnects_after_redis_restart(own_redis: OwnRedis, tmp_path: Path) -> None:
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
