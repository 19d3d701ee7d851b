"""A farm that repairs itself, as ``farm up`` starts it: virtual phones, a worker each, and the
monitor (``python -m deploy.farm.monitor``), all real processes on a real Redis and S3.

A worker is SIGKILLed in the middle of a run's sub-task. Without anyone running
``droidretriever up``: the run hears within seconds that the phone went down, its sub-task
finishes on a phone (and the run hears which), and the monitor starts the dead worker again from
the farm manifest, which then records the new process. ``farm down`` stops the monitor before
the workers, so nothing comes back after it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.config import RedisSettings, S3Settings, Settings, load_settings
from core.models import RunEvent, RunEventKind, new_id
from core.redis_client import open_redis
from deploy.farm import (
    ProcessRecord,
    bring_down,
    bring_up_sim,
    farm_dir,
    is_running,
    read_manifest,
    wait_for_workers,
    worker_process_name,
)
from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from droidretriever.testing import FAST_FARM, free_port
from storage import RunEventReader
from tasks.keys import synthetic_steps_key
from tasks.worker import FarmClient, create_celery_app
from tasks.worker.farm_tasks import SYNTHETIC, SyntheticRequest, SyntheticResult
from tests.support.farm import wait_until

pytestmark = [pytest.mark.services, pytest.mark.slow]

MCDONALDS = "com.mcdonalds.gma.cn"


@pytest.fixture()
def farm(redis_url: str, s3_settings: S3Settings, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """Two virtual phones brought up as ``farm up --sim`` does (no shared OCR: not needed here)."""
    if s3_settings.access_key is None or s3_settings.secret_key is None:
        raise RuntimeError("the session's S3 settings have no keys")
    for name in [k for k in os.environ if k.startswith("DROIDRETRIEVER_")]:
        monkeypatch.delenv(name)
    env = {**FAST_FARM, "DROIDRETRIEVER_REDIS__URL": redis_url,
           "DROIDRETRIEVER_STATE_DIR": str(tmp_path / "state"),
           "DROIDRETRIEVER_SIM__ADB_PORT": str(free_port()),
           "DROIDRETRIEVER_FARM__SHARED_OCR": "false",
           "DROIDRETRIEVER_PERCEPTION__OCR_BACKEND": "none",
           "DROIDRETRIEVER_S3__ENDPOINT": str(s3_settings.endpoint),
           "DROIDRETRIEVER_S3__BUCKET": "dr-farm-repair",
           "DROIDRETRIEVER_S3__ACCESS_KEY": s3_settings.access_key,
           "DROIDRETRIEVER_S3__SECRET_KEY": s3_settings.secret_key.get_secret_value()}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = load_settings()
    open_redis(RedisSettings(url=redis_url)).flushdb()
    manifest = bring_up_sim(settings, phones=2)
    try:
        wait_for_workers(DeviceRegistry.from_settings(settings), manifest.serials, timeout_s=120)
        yield settings
    finally:
        bring_down(settings)


def _worker(settings: Settings, serial: str) -> ProcessRecord:
    manifest = read_manifest(settings.state_dir)
    assert manifest is not None
    return next(p for p in manifest.processes if p.name == worker_process_name(serial))


def _log_tail(settings: Settings, name: str, lines: int = 30) -> str:
    log = farm_dir(settings.state_dir) / f"{name}.log"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "-"


def _events(settings: Settings, run_id: str, kind: RunEventKind) -> list[RunEvent]:
    reader = RunEventReader(open_redis(settings.redis))
    return [e for e in reader.read_after(run_id) if e.kind is kind]


def test_a_killed_worker_is_told_to_its_run_its_subtask_ends_and_the_farm_restarts_it(
        farm: Settings) -> None:
    settings = farm
    registry = DeviceRegistry.from_settings(settings)
    app = create_celery_app(settings)
    run_id = new_id("run")
    try:
        pending = FarmClient(app).send_to_app(
            SYNTHETIC, MCDONALDS, SyntheticRequest(run_id=run_id, subtask_id="mcd-1",
                                                   package=MCDONALDS, steps=8, step_pause_s=0.4),
            SyntheticResult)

        def running() -> str | None:
            return next((s.info.serial for s in registry.statuses() if s.inflight is not None
                         and s.inflight.task_id == pending.task_id), None)

        victim = str(wait_until(running, 30, "the sub-task to start on a phone", interval_s=0.05))
        wait_until(lambda: registry.client.hlen(synthetic_steps_key(run_id, "mcd-1")) >= 1, 30,
                   "a first step", interval_s=0.05)
        killed = _worker(settings, victim)
        killed_at, killed_time = time.monotonic(), datetime.now(UTC)
        os.kill(killed.pid, signal.SIGKILL)

        try:
            lost = wait_until(lambda: _events(settings, run_id, RunEventKind.PHONE_LOST), 30,
                              "the run to hear its phone went down", interval_s=0.1)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; {victim}: {registry.status(victim)}; the monitor's "
                                 f"log ends:\n{_log_tail(settings, 'monitor')}") from None
        told_s = time.monotonic() - killed_at
        result = pending.get(timeout=90)
        moved = wait_until(lambda: _events(settings, run_id, RunEventKind.SUBTASK_MOVED), 30,
                           "the run to hear where its sub-task went on")
    finally:
        app.close()

    assert told_s < 10, f"the run heard of its dead phone {told_s:.1f} s after the kill"
    assert lost[0].message.startswith(f"{victim} is down: missed heartbeats")
    assert "goes back to the queue" in lost[0].message
    assert result.steps == 8 and result.redelivered
    assert f"goes on on {result.serial}" in moved[0].message

    # Repaired by the monitor alone: a new worker process, recorded in the manifest, beating.
    def restarted() -> ProcessRecord | None:
        record = _worker(settings, victim)
        return record if record.pid != killed.pid and is_running(record) else None

    again = wait_until(restarted, 60, "the monitor to start the dead worker again")
    wait_for_workers(registry, (victim,), timeout_s=90, since=killed_time)
    wait_until(lambda: registry.status(victim).state is DeviceState.IDLE, 30,
               "the restarted worker to take sub-tasks")

    # Down stops the monitor first: it starts no worker again once they stop.
    manifest = read_manifest(settings.state_dir)
    assert manifest is not None
    bring_down(settings)
    time.sleep(2 * registry.heartbeat_ttl_s)
    assert not is_running(again)
    assert read_manifest(settings.state_dir) is None
    assert not [p.name for p in manifest.processes if is_running(p)]
