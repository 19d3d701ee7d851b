"""No delivery waits hours: a worker killed between receiving a sub-task and its first line.

Real Redis, real worker processes on two virtual phones with McDonald's, the farm monitor,
and a visibility timeout of 4 s. The first phone's worker is the held worker
(``tests/tasks/worker/held_worker.py``): it receives the sub-task and stops before the task's
first line, still beating. While it lives the message stays its own (the other phone's idle
worker sweeps for messages nobody kept visible, and finds none); once it is SIGKILLed
nothing records the sub-task as in flight (the monitor cannot help), and the broker hands it
to the other phone within the timeout and a sweep. A sub-task that runs for several timeouts
on a live worker keeps its message and runs once.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.config import RedisSettings, Settings
from core.redis_client import open_redis
from deploy.farm import ProcessRecord, is_running, start_process, stop_process
from device_farm.errors import DeviceTimeout
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from tasks.keys import synthetic_completions_key, synthetic_steps_key
from tasks.worker import FarmClient, app_queue, create_celery_app
from tasks.worker.celery_app import restore_interval_s
from tasks.worker.farm_client import LOST_AFTER_CHECKS, LOST_CHECK_S
from tasks.worker.farm_tasks import SYNTHETIC, SyntheticRequest, SyntheticResult
from tests.support.example_apps import example_catalog
from tests.support.farm import FarmProcesses, farm_env, farm_settings, wait_for_idle, wait_until
from tests.tasks.worker.held_worker import MARKER_ENV

MCDONALDS = "com.mcdonalds.gma.cn"
VISIBILITY_S = 4.0
UNACKED = "unacked"  # kombu's hash of messages handed out and not yet acknowledged

pytestmark = [pytest.mark.services, pytest.mark.slow]


@dataclass
class Farm:
    """Two virtual phones, their worker processes (started by each test), the monitor."""

    sim: SimServer
    procs: FarmProcesses
    settings: Settings
    client: FarmClient
    marker: Path  # where the held worker writes the id of the task it holds

    def unacked_ids(self) -> set[str]:
        """Task ids of the messages the broker has handed out and not had back."""
        raw = open_redis(self.settings.redis).hvals(UNACKED)
        return {json.loads(value)[0]["headers"]["id"] for value in raw}


@pytest.fixture(scope="module")
def farm(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    open_redis(RedisSettings(url=redis_url)).flushdb()
    state_dir = tmp_path_factory.mktemp("redelivery")
    marker = state_dir / "held-task"
    env = {**farm_env(redis_url, state_dir),
           "DROIDRETRIEVER_FARM__VISIBILITY_TIMEOUT_S": str(VISIBILITY_S), MARKER_ENV: str(marker)}
    settings = farm_settings(env)
    with SimServer(phones=2, port=0, seed=7, catalog=example_catalog(),
                   phone_apps={"emulator-5554": [MCDONALDS], "emulator-5556": [MCDONALDS]}) as sim:
        procs = FarmProcesses(state_dir, env, sim.port)
        app = create_celery_app(settings)
        try:
            procs.start_monitor()
            yield Farm(sim, procs, settings, FarmClient(app), marker)
        finally:
            procs.stop()
            app.close()


def _start_held_worker(farm: Farm, serial: str) -> ProcessRecord:
    record = start_process(farm.procs.state_dir, f"held-{serial}", [
        "python", "-m", "tests.tasks.worker.held_worker", "--serial", serial, "--adb-host",
        "127.0.0.1", "--adb-port", str(farm.sim.port), "--loglevel", "WARNING",
    ], env=farm.procs.env)
    farm.procs.workers[serial] = record
    return record


def test_worker_killed_before_the_first_line_is_redelivered_in_seconds(farm: Farm) -> None:
    held, other = farm.sim.serials
    registry = DeviceRegistry.from_settings(farm.settings)
    victim = _start_held_worker(farm, held)
    wait_for_idle(registry, [held], farm.procs, timeout_s=90)
    request = SyntheticRequest(run_id="run-held", subtask_id="mcd-1", package=MCDONALDS, steps=1)
    pending = farm.client.send_to_app(SYNTHETIC, MCDONALDS, request, SyntheticResult)
    wait_until(farm.marker.exists, 30, "the held worker to receive the sub-task")
    assert farm.marker.read_text() == pending.task_id

    # Received, not started: no in-flight record, yet the message stays the live worker's
    # well past the visibility timeout (its heartbeat keeps it visible), although the other
    # phone's idle worker sweeps for messages nobody kept visible.
    farm.procs.start_worker(other)
    wait_for_idle(registry, [other], farm.procs, timeout_s=90)
    deadline = time.monotonic() + 2 * VISIBILITY_S + restore_interval_s(VISIBILITY_S)
    while time.monotonic() < deadline:
        assert pending.task_id in farm.unacked_ids()
        assert registry.client.llen(app_queue(MCDONALDS)) == 0
        assert registry.status(held).inflight is None
        time.sleep(0.2)

    os.kill(victim.pid, signal.SIGKILL)
    killed = time.monotonic()
    result = pending.get(timeout=60)
    waited = time.monotonic() - killed

    assert result.serial == other
    # The timeout, one sweep, and the sub-task itself: seconds, where it was 2 hours.
    assert waited < VISIBILITY_S + 2 * restore_interval_s(VISIBILITY_S) + 5, waited
    assert registry.client.lrange(synthetic_completions_key("run-held"), 0, -1) == [b"mcd-1"]
    assert pending.task_id not in farm.unacked_ids()
    print(f"redelivered and done {waited:.1f} s after the kill (visibility timeout {VISIBILITY_S} s)")


def test_long_subtask_on_a_live_worker_keeps_its_message(farm: Farm) -> None:
    registry = DeviceRegistry.from_settings(farm.settings)
    first, second = farm.sim.serials
    for serial in (first, second):  # plain workers on both phones
        record = farm.procs.workers.get(serial)
        if record is not None and record.name.startswith("held-"):
            stop_process(record, timeout_s=1)
        if record is None or not is_running(record):
            farm.procs.start_worker(serial)
    wait_for_idle(registry, [first, second], farm.procs, timeout_s=90)

    # About four visibility timeouts long.
    request = SyntheticRequest(run_id="run-long", subtask_id="mcd-2", package=MCDONALDS, steps=4,
                               step_pause_s=VISIBILITY_S)
    pending = farm.client.send_to_app(SYNTHETIC, MCDONALDS, request, SyntheticResult)
    runner = wait_until(lambda: next((s.info.serial for s in registry.statuses()
                                      if s.inflight and s.inflight.task_id == pending.task_id), None),
                        30, "the sub-task to start")
    idle = second if runner == first else first
    while not pending.ready():
        # never put back, never taken by another (or it has just ended and been acknowledged)
        assert pending.task_id in farm.unacked_ids() or pending.ready()
        inflight = registry.status(idle).inflight
        assert inflight is None or inflight.task_id != pending.task_id
        time.sleep(0.2)

    result = pending.get(timeout=10)
    assert result.serial == runner and not result.redelivered
    steps = registry.client.hgetall(synthetic_steps_key("run-long", "mcd-2"))
    assert set(steps.values()) == {runner.encode()} and len(steps) == 4
    assert registry.client.lrange(synthetic_completions_key("run-long"), 0, -1) == [b"mcd-2"]



def test_a_message_the_broker_lost_is_sent_again_and_runs_once(farm: Farm) -> None:
    """A worker's pop took the message off its queue and its host went before the broker
    recorded it as handed out: no queue, worker or phone has it. The caller waiting for it
    sends it again (same task id) and a phone runs it once. A message that merely waits on its
    queue, with no phone free, is never sent twice."""
    registry = DeviceRegistry.from_settings(farm.settings)
    for record in farm.procs.workers.values():
        stop_process(record, timeout_s=5)
    queue = app_queue(MCDONALDS)
    request = SyntheticRequest(run_id="run-lost", subtask_id="mcd-3", package=MCDONALDS, steps=1)

    waiting = farm.client.send_to_app(SYNTHETIC, MCDONALDS, request, SyntheticResult)
    with pytest.raises(DeviceTimeout):
        waiting.get(timeout=(LOST_AFTER_CHECKS + 1) * LOST_CHECK_S)
    assert waiting.resent == 0 and registry.client.llen(queue) == 1
    registry.client.delete(queue)

    pending = farm.client.send_to_app(SYNTHETIC, MCDONALDS, request, SyntheticResult)
    popped = registry.client.rpop(queue)  # as a worker's BRPOP whose host then died
    assert popped is not None and pending.task_id.encode() in popped
    first = farm.sim.serials[0]
    farm.procs.start_worker(first)
    wait_for_idle(registry, [first], farm.procs, timeout_s=90)

    result = pending.get(timeout=60)
    assert pending.resent == 1
    assert result.serial == first
    assert registry.client.lrange(synthetic_completions_key("run-lost"), 0, -1) == [b"mcd-3"]
