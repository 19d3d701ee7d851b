"""Redis clients ride out a restart of the server: a command waits instead of failing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import redis

from core.config import RedisSettings
from core.redis_client import (
    BACKOFF_BASE_S,
    BACKOFF_CAP_S,
    open_redis,
    retries_for_window,
)
from droidretriever.testing import RedisServer


def test_retries_wait_at_least_the_window_with_the_shortest_jitter() -> None:
    for window in (0.0, 1.0, 30.0, 90.0, 600.0):
        retries = retries_for_window(window)
        shortest = sum(min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**n) / 2 for n in range(1, retries + 1))
        assert shortest >= window
        assert retries == 0 or shortest - min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**retries) / 2 < window


def test_a_command_waits_out_a_restart_and_a_zero_window_fails_at_once(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, persist=True)
    server.start()
    settings = RedisSettings(url=server.url, retry_window_s=30)
    patient, impatient = open_redis(settings), open_redis(settings, retry_window_s=0)
    try:
        patient.set("kept", "1")
        server.stop()
        with pytest.raises(redis.ConnectionError):
            impatient.get("kept")

        def start_again() -> None:
            time.sleep(2.0)
            server.start()

        restarter = threading.Thread(target=start_again)
        restarter.start()
        started = time.monotonic()
        assert patient.get("kept") == b"1"  # the append-only file kept it
        assert time.monotonic() - started >= 2.0
        restarter.join()
    finally:
        server.stop()
