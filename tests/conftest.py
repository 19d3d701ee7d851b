"""Session fixtures that start real services (Redis, S3, Prefect) for the tests.

Each service runs on a free loopback port with its data in a temporary
folder, so tests never touch a developer's own stack, and with generated
secrets, as ``droidretriever up`` runs them: Redis has a password (in the URL the
fixture yields), SeaweedFS generated keys, JWT signing and mutual TLS.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import S3Settings, StackSettings, load_settings
from deploy.local import SeaweedService, ensure_stack_secrets
from droidretriever.testing import free_port, free_port_block, running_redis

# Fixtures that start a real service (Redis, S3, Prefect, a farm of workers, the HTTP stack). A
# test that uses one, directly or through another fixture, is marked ``services`` here, so the
# fast tier (``scripts/test.sh --fast``: ``-m "not services and not slow"``) never waits on one.
SERVICE_FIXTURES = frozenset({
    "redis_url", "s3_service", "s3_settings", "api_prefect", "api_stack", "pause_webhook",
    "schema_prefect", "prefect_harness", "flow_farm", "webhook",
})


# Fixtures that drive a virtual phone, read screens with OCR or open a browser: seconds per test.
# A test that uses one is marked ``slow`` here, and the fast tier leaves it to the full run.
SLOW_FIXTURES = frozenset({"sim", "catalog_phone", "rig", "perceiver", "device", "local_stack", "browser"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if SERVICE_FIXTURES & used:
            item.add_marker(pytest.mark.services)
        if SLOW_FIXTURES & used:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free port with a password, for the whole session (URL holds it)."""
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(scope="session")
def tmp_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="session")
def s3_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedService]:
    """A real SeaweedFS S3 server (deploy.local's own service code) on free ports.

    Session-wide; a test may stop and restart it (the spool test does) but must
    leave it running.
    """
    settings = ensure_stack_secrets(load_settings(
        state_dir=tmp_path_factory.mktemp("s3-state"),
        s3=S3Settings(endpoint=f"http://127.0.0.1:{free_port()}", bucket="droidretriever-test"),
        stack=StackSettings(weed_base_port=free_port_block(7)),
    ))
    service = SeaweedService(settings)
    service.start()
    try:
        service.wait_healthy(90)
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="session")
def s3_settings(s3_service: SeaweedService) -> S3Settings:
    """S3Settings pointing at the session's real SeaweedFS server (with its generated keys)."""
    return s3_service.settings.s3
