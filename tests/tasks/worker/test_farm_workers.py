"""Real Celery workers on virtual phones: routing by app, SIGKILL mid sub-task, dropped phone.

Three phones: Meituan is installed only on the third; McDonald's and Settings
on all. One worker process per phone plus the farm monitor, started once for
the module.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from core.config import RedisSettings
from core.redis_client import open_redis
from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from droidretriever.testing import FAST_FARM
from tasks.keys import synthetic_completions_key, synthetic_steps_key
from tasks.worker import FarmClient, create_celery_app
from tasks.worker.farm_tasks import (
    DIAGNOSE,
    SYNTHETIC,
    DiagnoseRequest,
    DiagnoseResult,
    SyntheticRequest,
    SyntheticResult,
)
from tests.support.example_apps import example_catalog
from tests.support.farm import (
    FarmProcesses,
    farm_env,
    farm_settings,
    wait_for_idle,
    wait_until,
)

MEITUAN = "com.sankuai.meituan"
MCDONALDS = "com.mcdonalds.gma.cn"
SETTINGS = "com.android.settings"


class Farm:
    def __init__(self, sim: SimServer, procs: FarmProcesses, registry: DeviceRegistry,
                 app: Celery) -> None:
        self.sim, self.procs, self.registry, self.app = sim, procs, registry, app
        self.client = FarmClient(app)

    def running_on(self, task_id: str) -> str:
        def find() -> str | None:
            for status in self.registry.statuses():
                if status.inflight is not None and status.inflight.task_id == task_id:
                    return status.info.serial
            return None
        return str(wait_until(find, 30, f"task {task_id} to start"))


@pytest.fixture(scope="module")
def farm(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    open_redis(RedisSettings(url=redis_url)).flushdb()
    state_dir: Path = tmp_path_factory.mktemp("farm-state")
    env = farm_env(redis_url, state_dir)
    settings = farm_settings(env)
    only_two = [MCDONALDS, SETTINGS]
    with SimServer(phones=3, port=0, seed=7, catalog=example_catalog(),
                   phone_apps={"emulator-5554": only_two, "emulator-5556": only_two}) as sim:
        procs = FarmProcesses(state_dir, env, sim.port)
        registry = DeviceRegistry.from_settings(settings)
        app = create_celery_app(settings)
        try:
            for serial in sim.serials:
                procs.start_worker(serial)
            procs.start_monitor()
            wait_for_idle(registry, sim.serials, procs, timeout_s=90)
            yield Farm(sim, procs, registry, app)
        finally:
            procs.stop()
            app.close()


def test_registry_knows_each_phone_and_its_apps(farm: Farm) -> None:
    first, _, third = farm.sim.serials
    assert farm.registry.info(third).packages == (SETTINGS, MCDONALDS, MEITUAN)
    assert MEITUAN not in farm.registry.info(first).packages
    assert farm.registry.devices_with_app(MEITUAN) == (third,)
    assert farm.registry.info(first).width == 1080


def test_subtask_for_an_app_on_one_phone_runs_there(farm: Farm) -> None:
    third = farm.sim.serials[2]
    pending = [farm.client.send_to_app(DIAGNOSE, MEITUAN, DiagnoseRequest(), DiagnoseResult)
               for _ in range(4)]
    assert {p.get(timeout=30).serial for p in pending} == {third}
    # And by serial, with an observe:
    first = farm.sim.serials[0]
    result = farm.client.send_to_device(DIAGNOSE, first, DiagnoseRequest(observe=True),
                                        DiagnoseResult).get(timeout=30)
    assert result.serial == first and result.observe_ms > 0


def _long_subtask(run_id: str, subtask_id: str) -> SyntheticRequest:
    return SyntheticRequest(run_id=run_id, subtask_id=subtask_id, package=MCDONALDS, steps=8,
                            step_pause_s=0.4)


def test_sigkilled_worker_subtask_completes_on_another_phone_once(farm: Farm) -> None:
    redis = farm.registry.client
    pending = farm.client.send_to_app(SYNTHETIC, MCDONALDS, _long_subtask("run-kill", "mcd-1"),
                                      SyntheticResult)
    victim = farm.running_on(pending.task_id)
    wait_until(lambda: redis.hlen(synthetic_steps_key("run-kill", "mcd-1")) >= 2, 30,
               "two steps recorded")
    os.kill(farm.procs.workers[victim].pid, signal.SIGKILL)

    result = pending.get(timeout=60)
    assert result.serial != victim
    assert result.redelivered  # it found the first attempt's steps
    assert result.steps == 8
    steps: dict[Any, Any] = redis.hgetall(synthetic_steps_key("run-kill", "mcd-1"))
    assert sorted(int(k) for k in steps) == list(range(8))  # each step once, overwritten
    assert redis.lrange(synthetic_completions_key("run-kill"), 0, -1) == [b"mcd-1"]
    # The monitor marks the phone down for its missed heartbeats (the sub-task may have come back
    # by the broker's visibility timeout before the monitor's next look).
    wait_until(lambda: farm.registry.status(victim).state is DeviceState.OFFLINE
               and "heartbeat" in farm.registry.status(victim).reason, 30, "the monitor to mark the phone down")
    # Bring the phone's worker back for the next tests.
    farm.procs.start_worker(victim)
    wait_for_idle(farm.registry, [victim], farm.procs)


def test_dropped_phone_is_quarantined_and_its_subtask_redelivered(farm: Farm) -> None:
    redis = farm.registry.client
    pending = farm.client.send_to_app(SYNTHETIC, MCDONALDS, _long_subtask("run-drop", "mcd-2"),
                                      SyntheticResult)
    victim = farm.running_on(pending.task_id)
    wait_until(lambda: redis.hlen(synthetic_steps_key("run-drop", "mcd-2")) >= 1, 30,
               "a step recorded")
    farm.sim.control.drop_connections(victim, count=1000)

    result = pending.get(timeout=60)
    assert result.serial != victim
    assert redis.lrange(synthetic_completions_key("run-drop"), 0, -1) == [b"mcd-2"]
    status = farm.registry.status(victim)
    assert status.state is DeviceState.QUARANTINED
    assert victim in status.reason
    # While quarantined, its queue is not consumed: a task for it waits.
    waiting = farm.client.send_to_device(DIAGNOSE, victim, DiagnoseRequest(), DiagnoseResult)
    farm.sim.control.clear_faults(victim)
    # Healthy probes bring it back; the waiting task then runs on it.
    assert waiting.get(timeout=60).serial == victim
    wait_until(lambda: farm.registry.status(victim).state is DeviceState.IDLE, 30, "rejoin")


def test_paused_run_keeps_its_phone_until_it_resumes(farm: Farm) -> None:
    third = farm.sim.serials[2]  # the only phone with Meituan
    leases = farm.registry.leases
    ttl_s = float(FAST_FARM["DROIDRETRIEVER_FARM__LEASE_TTL_S"])
    beat_s = float(FAST_FARM["DROIDRETRIEVER_FARM__HEARTBEAT_S"])
    paused = farm.client.send_to_device(SYNTHETIC, third, SyntheticRequest(
        run_id="run-pause", subtask_id="mt-1", package=MEITUAN, steps=1, pause_for_user=True),
        SyntheticResult).get(timeout=30)
    assert paused.serial == third
    status = farm.registry.status(third)
    assert status.state is DeviceState.PAUSED_FOR_USER and status.lease_run == "run-pause"

    # Another run's sub-task for Meituan has nowhere to go while the person decides.
    other = farm.client.send_to_app(SYNTHETIC, MEITUAN, SyntheticRequest(
        run_id="run-other", subtask_id="mt-2", package=MEITUAN, steps=1), SyntheticResult)
    # Well past one lease TTL: the worker's heartbeat keeps renewing the paused run's lease.
    deadline = time.monotonic() + ttl_s * 1.6
    while time.monotonic() < deadline:
        assert leases.holder(third) == "run-pause"
        assert not leases.acquire(third, "run-other")
        assert farm.registry.status(third).state is DeviceState.PAUSED_FOR_USER
        time.sleep(0.5)
    remaining = leases.remaining_s(third)
    assert remaining is not None and remaining > ttl_s - 2 * beat_s
    assert not other.ready()

    # The run resumes on its phone (device.<serial>), finishes, and lets the phone go.
    resumed = farm.client.send_to_device(SYNTHETIC, third, SyntheticRequest(
        run_id="run-pause", subtask_id="mt-3", package=MEITUAN, steps=1), SyntheticResult)
    assert resumed.get(timeout=30).serial == third
    # Only then does the other run get the phone, and it too releases it when done.
    assert other.get(timeout=30).serial == third
    wait_until(lambda: leases.holder(third) is None
               and farm.registry.status(third).state is DeviceState.IDLE, 15, "the phone freed")
