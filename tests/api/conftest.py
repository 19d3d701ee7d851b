"""A real stack for the API tests: Redis, SeaweedFS S3, Prefect (test harness), two virtual phones
with a worker each, the runner (``python -m flows.runner``) and the API (``python -m
droidretriever.api``) as processes, as ``droidretriever up`` runs them."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from deploy.farm import stop_processes
from droidretriever.config import RedisSettings, S3Settings, load_settings
from droidretriever.redis_client import open_redis
from droidretriever.testing import free_port
from tests.support.api import ApiStack, start_api, start_runner
from tests.support.farm import FarmProcesses, farm_env, run_farm
from tests.support.prefect import prefect_server
from tests.support.webhook import Webhook

GMAIL = "com.google.android.gm"


def log_gmail_out(stack: ApiStack) -> None:
    """Every phone as it booted (no text left in a field by an earlier test), Gmail logged out."""
    for serial in stack.farm.sim.serials:
        stack.farm.sim.control.reset("boot", serial)
        stack.farm.sim.control.set_logged_in(serial, GMAIL, False)
CONFIRM_WINDOW_S = "1.0"  # long enough to see (and cancel) a planned action, short enough to run


@pytest.fixture(scope="package")
def api_prefect() -> Iterator[tuple[str, str]]:
    """A temporary Prefect server for the package, behind basic auth as the stack's: its API URL
    and the auth string (``user:password``)."""
    with prefect_server() as served:
        yield served


@pytest.fixture(scope="package")
def pause_webhook() -> Iterator[Webhook]:
    """Where the stack's pause webhook (api.pause_webhook) posts."""
    hook = Webhook()
    yield hook
    hook.close()


# Package scope: the phones' workers consume the session's Redis, so they must be gone before
# other packages' tests start their own workers on it.
@pytest.fixture(scope="package")
def api_stack(redis_url: str, s3_settings: S3Settings, api_prefect: tuple[str, str],
              pause_webhook: Webhook, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiStack]:
    if s3_settings.access_key is None or s3_settings.secret_key is None:
        raise RuntimeError("the session's S3 settings have no keys")
    prefect_url, prefect_auth = api_prefect
    open_redis(RedisSettings(url=redis_url)).flushdb()
    state_dir = tmp_path_factory.mktemp("api-state")
    port = free_port()
    env = {
        **farm_env(redis_url, state_dir),
        "DROIDRETRIEVER_S3__ENDPOINT": str(s3_settings.endpoint),
        "DROIDRETRIEVER_S3__BUCKET": "dr-api-stack",  # its own: other packages count their runs
        "DROIDRETRIEVER_S3__ACCESS_KEY": s3_settings.access_key,
        "DROIDRETRIEVER_S3__SECRET_KEY": s3_settings.secret_key.get_secret_value(),
        "DROIDRETRIEVER_PREFECT__API_URL": prefect_url,
        "DROIDRETRIEVER_PREFECT__AUTH_STRING": prefect_auth,
        "PREFECT_API_URL": prefect_url,
        "PREFECT_API_AUTH_STRING": prefect_auth,  # for processes that talk to Prefect directly
        "PREFECT_SERVER_ALLOW_EPHEMERAL_MODE": "false",
        "DROIDRETRIEVER_API__PORT": str(port),
        "DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S": "240",
        "DROIDRETRIEVER_BUDGETS__CONFIRM_WINDOW_S": CONFIRM_WINDOW_S,
        "DROIDRETRIEVER_API__CONCURRENT_RUNS": "2",
        "DROIDRETRIEVER_API__PAUSE_WEBHOOK": pause_webhook.url,
    }
    patch = pytest.MonkeyPatch()
    for key, value in env.items():
        patch.setenv(key, value)
    settings = load_settings()
    process_env = {**os.environ, **env}
    try:
        with run_farm(FarmProcesses, state_dir, process_env, settings, phones=2,
                      monitor=False) as farm:
            runner = start_runner(state_dir, process_env)
            api = start_api(state_dir, process_env, settings.api.base_url)
            try:
                yield ApiStack(base=settings.api.base_url, settings=settings, env=process_env,
                               farm=farm, api=api, runner=runner)
            finally:
                stop_processes([api, runner], timeout_s=30)
    finally:
        patch.undo()
