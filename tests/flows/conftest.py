"""Real services for the flow tests: Prefect (test harness), Redis, SeaweedFS S3, virtual phones
with one real Celery worker process each (serving ``copilot.navigate`` and ``probe.navigate``)
and the farm monitor.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.config import RedisSettings, S3Settings, Settings, load_settings
from core.redis_client import open_redis
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimServer
from tests.support.farm import FarmProcesses, farm_env, run_farm, wait_for_idle
from tests.support.prefect import prefect_server
from tests.support.webhook import Webhook


class FlowFarmProcesses(FarmProcesses):
    """Workers that serve the probe task too (tests/flows/worker.py)."""

    worker_module = "tests.flows.worker"


@dataclass
class FlowFarm:
    sim: SimServer
    procs: FarmProcesses
    registry: DeviceRegistry
    settings: Settings
    env: dict[str, str]

    def restart_worker(self, serial: str) -> None:
        self.procs.start_worker(serial)
        wait_for_idle(self.registry, [serial], self.procs, timeout_s=90)


def _env(redis_url: str, s3: S3Settings, state_dir: Path, prefect_auth: str) -> dict[str, str]:
    if s3.access_key is None or s3.secret_key is None:
        raise RuntimeError("the session's S3 settings have no keys")
    return {
        **farm_env(redis_url, state_dir),
        "DROIDRETRIEVER_S3__ENDPOINT": str(s3.endpoint),
        "DROIDRETRIEVER_S3__BUCKET": s3.bucket,
        "DROIDRETRIEVER_S3__ACCESS_KEY": s3.access_key,
        "DROIDRETRIEVER_S3__SECRET_KEY": s3.secret_key.get_secret_value(),
        "DROIDRETRIEVER_PREFECT__AUTH_STRING": prefect_auth,
        "PREFECT_API_AUTH_STRING": prefect_auth,  # for processes that talk to Prefect directly
        "DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S": "60",
        # The tests' webhook receiver (tests/support/webhook.py) listens on loopback.
        "DROIDRETRIEVER_SUBSCRIPTIONS__WEBHOOK_PRIVATE": "true",
    }


@pytest.fixture(scope="package")
def prefect_harness() -> Iterator[str]:
    """A temporary Prefect server (SQLite) behind basic auth, as the stack's; flows run in this
    process. Yields the auth string (``user:password``)."""
    with prefect_server() as (_, auth):
        yield auth


# Package scope: the farm's workers consume the session's Redis, so they must be gone before
# other packages' tests (tests/tasks/worker) start their own workers on it.
@pytest.fixture(scope="package")
def flow_farm(redis_url: str, s3_settings: S3Settings, prefect_harness: str,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlowFarm]:
    """Three virtual phones (every app), a worker each, the monitor; env set for the flows."""
    open_redis(RedisSettings(url=redis_url)).flushdb()
    state_dir = tmp_path_factory.mktemp("flow-state")
    env = _env(redis_url, s3_settings, state_dir, prefect_harness)
    patch = pytest.MonkeyPatch()
    for key, value in env.items():
        patch.setenv(key, value)
    settings = load_settings()
    try:
        with run_farm(FlowFarmProcesses, state_dir, env, settings, phones=3) as farm:
            yield FlowFarm(farm.sim, farm.procs, farm.registry, settings, env)
    finally:
        patch.undo()


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook()
    yield hook
    hook.close()
