"""Session fixtures that start real services (Redis, S3, Prefect) for the tests.

Each service runs on a free loopback port with its data in a temporary
folder, so tests never touch a developer's own stack.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local import SeaweedService
from droidretriever.config import S3Settings, StackSettings, load_settings
from droidretriever.testing import free_port, free_port_block, wait_for_port


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free port, for the whole session."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: run scripts/test.sh (it installs it)")
    port = free_port()
    data = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
         "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def tmp_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="session")
def s3_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedService]:
    """A real SeaweedFS S3 server (deploy.local's own service code) on free ports.

    Session-wide; a test may stop and restart it (the spool test does) but must
    leave it running.
    """
    settings = load_settings(
        state_dir=tmp_path_factory.mktemp("s3-state"),
        s3=S3Settings(endpoint=f"http://127.0.0.1:{free_port()}", bucket="droidretriever-test"),
        stack=StackSettings(weed_base_port=free_port_block(7)),
    )
    service = SeaweedService(settings)
    service.start()
    try:
        service.wait_healthy(90)
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="session")
def s3_settings(s3_service: SeaweedService) -> S3Settings:
    """S3Settings pointing at the session's real SeaweedFS server."""
    return s3_service.settings.s3
