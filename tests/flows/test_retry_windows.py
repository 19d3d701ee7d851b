"""Every retry policy that rides out a restart waits at least its window, even with the shortest
jitter draws: Celery's (results, the result wait, publishing), Prefect's client, app starts."""

from __future__ import annotations

import pytest

from core.config import PrefectSettings
from flows.retrieve import app_start_delays
from tasks.worker.celery_app import redis_retry_policy

WINDOWS = (0.0, 5.0, 60.0, 90.0, 600.0)


@pytest.mark.parametrize("window", WINDOWS)
def test_celery_retries_wait_out_redis(window: float) -> None:
    policy = redis_retry_policy(window)
    retries = policy["max_retries"]
    assert isinstance(retries, int)
    start, step, cap = (float(policy[k] or 0) for k in ("interval_start", "interval_step",
                                                         "interval_max"))
    waits = [min(cap, start + step * n) for n in range(retries)]
    assert sum(waits) >= window
    assert policy["timeout"] == (window or None)  # 0 would mean "no limit" to kombu


@pytest.mark.parametrize("window", WINDOWS)
def test_prefect_client_retries_wait_out_the_server(window: float) -> None:
    retries = PrefectSettings(retry_window_s=window).client_max_retries
    # Prefect waits 2**n s before retry n, drawn within 20 % either way.
    assert sum(0.8 * 2**n for n in range(1, retries + 1)) >= window
    assert retries == 0 or sum(0.8 * 2**n for n in range(1, retries)) < window


@pytest.mark.parametrize("window", WINDOWS)
def test_app_start_retries_wait_out_the_server_in_steps_of_at_most_10_s(window: float) -> None:
    delays = app_start_delays(window)
    assert sum(delays) * 0.8 >= window
    assert all(d <= 10.0 for d in delays)
    assert not delays or delays[0] <= 2.0  # a server back at once is seen at once
