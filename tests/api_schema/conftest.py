"""The schema test's own Prefect server: one that no runner serves and that has no deployment,
so a run the generated requests start is refused and nothing runs (in ``tests/api`` the stack's
runner would execute them on the package's phones, under the other tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.prefect import prefect_server


@pytest.fixture(scope="package")
def schema_prefect() -> Iterator[tuple[str, str]]:
    """Its API URL and the auth string (``user:password``)."""
    with prefect_server() as served:
        yield served
