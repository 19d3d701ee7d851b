"""``POST /runs`` starts a run through :func:`flows.runner.start_run`: on a Prefect server that
accepts connections and never answers, it answers a clear error within its bounded wait instead
of holding the person's request for Prefect's default six tries of 60 s."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows import runner
from flows.errors import FlowError
from flows.models import RetrieveRequest


@pytest.fixture
def silent_prefect() -> Iterator[str]:
    """An API URL whose server takes connections (the kernel's backlog) and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield f"http://127.0.0.1:{server.getsockname()[1]}/api"


def test_a_silent_prefect_is_reported_not_waited_on(silent_prefect: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "START_REQUEST_S", 0.5)
    request = RetrieveRequest(text="Is a Big Mac cheaper on Meituan?", run_id="run-20261125T020000-abc123")
    with temporary_settings({PREFECT_API_URL: silent_prefect}), \
            pytest.raises(FlowError, match=r"Prefect did not answer within 0\.5 s") as raised:
        runner.start_run(request)
    assert "the run was not started" in str(raised.value)
    assert "droidretriever status" in (raised.value.hint or "")
