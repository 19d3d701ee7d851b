"""A temporary Prefect server for a test package, as the stack's: behind basic auth."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from prefect.settings import (
    PREFECT_API_AUTH_STRING,
    PREFECT_API_URL,
    PREFECT_SERVER_API_AUTH_STRING,
    temporary_settings,
)
from prefect.testing.utilities import prefect_test_harness

from core.secrets import generate_secret


@contextmanager
def prefect_server() -> Iterator[tuple[str, str]]:
    """Prefect's test harness (SQLite) behind basic auth, this process's client set to it:
    its API URL and the auth string (``user:password``)."""
    patch = pytest.MonkeyPatch()
    # Its telemetry service writes to the SQLite database at start, racing the first requests
    # on a busy machine ("database is locked"); nothing may leave this machine anyway.
    patch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    auth = f"droidretriever:{generate_secret()}"
    try:
        with temporary_settings({PREFECT_SERVER_API_AUTH_STRING: auth, PREFECT_API_AUTH_STRING: auth}), \
                prefect_test_harness(server_startup_timeout=90):
            yield str(PREFECT_API_URL.value()), auth
    finally:
        patch.undo()
