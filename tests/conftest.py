"""Session fixtures that start real services (Redis, S3, Prefect) for the tests.

Each service runs on a free loopback port with its data in a temporary
folder, so tests never touch a developer's own stack.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local import SeaweedService, is_port_free
from droidretriever.config import S3Settings, StackSettings, load_settings


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port_block(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports, below the ephemeral range.

    Servers that a test stops and restarts on the same ports must not sit in the
    kernel's ephemeral range: while they are down, any outgoing connection (their
    own internal ones included) may take one of those ports, and the restart then
    dies with "address already in use" (weed did, once, in CI).
    """
    ephemeral_low, _ = _ephemeral_range()
    low = 20000 if ephemeral_low > 21000 else 10000
    high = ephemeral_low - count
    for _ in range(500):
        base = random.randrange(low, high)
        if all(is_port_free("127.0.0.1", base + i) for i in range(count)):
            return base
    raise RuntimeError(f"no block of {count} free ports found in {low}-{high}")


def free_port() -> int:
    """A free loopback port outside the ephemeral range (see free_port_block)."""
    return free_port_block(1)


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


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
