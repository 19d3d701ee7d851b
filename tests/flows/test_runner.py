"""``POST /runs`` starts a run through :func:`flows.runner.start_run`: on a Prefect server that
accepts connections and never answers, it answers a clear error within its bounded wait instead
of holding the person's request for Prefect's default six tries of 60 s. The warm runner starts
an announced run at once, in its own process, as a Prefect flow run of the deployment; holds
runs beyond its limit until a slot frees; and turns a cancel in Prefect into stop-and-report."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast
from uuid import UUID

import pytest
import redis
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.deployments.runner import RunnerDeployment
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.states import Cancelling

from core.config import RedisSettings
from core.redis_client import open_redis
from flows import runner
from flows.errors import FlowError
from flows.keys import RUNNER_WAKE_CHANNEL
from flows.models import RetrieveRequest
from flows.stop import is_stop_requested
from tests.support.farm import wait_until


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


# The warm runner, on the package's Prefect server and the session's Redis, with a flow of its own
# (a run waits until the test lets it go, so slots and cancels can be watched).
_RELEASED: dict[str, threading.Event] = {}


@flow(name="runner-probe")
def probe(request: RetrieveRequest) -> str:
    """Wait until the test releases this run (at most a minute), then answer its run id."""
    _RELEASED.setdefault(request.run_id or "", threading.Event()).wait(60)
    return request.run_id or ""


@dataclass
class Served:
    deployment_id: UUID
    runner: runner.WarmRunner
    redis: redis.Redis[bytes]

    def ask(self, run_id: str, *, announce: bool = True) -> UUID:
        _RELEASED[run_id] = threading.Event()
        request = RetrieveRequest(text="probe", run_id=run_id)
        with get_client(sync_client=True) as client:
            flow_run = client.create_flow_run_from_deployment(
                self.deployment_id, parameters={"request": request.model_dump(mode="json")})
        if announce:
            self.redis.publish(RUNNER_WAKE_CHANNEL, str(flow_run.id))
        return flow_run.id


def _listeners(client: redis.Redis[bytes]) -> int:
    return sum(int(count) for _, count in client.pubsub_numsub(RUNNER_WAKE_CHANNEL))


def _state(flow_run_id: UUID) -> StateType | None:
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run_id).state
    return state.type if state else None


def _wait_for_state(flow_run_id: UUID, wanted: StateType, timeout_s: float = 60) -> None:
    wait_until(lambda: _state(flow_run_id) is wanted, timeout_s, f"flow run {flow_run_id} {wanted}",
               interval_s=0.1)


@pytest.fixture
def served(prefect_harness: str, redis_url: str, request: pytest.FixtureRequest) -> Iterator[Served]:
    """A warm runner of ``probe``'s deployment, one run at once. It polls once when it starts,
    then only every hour (unless the test says): a run it starts later was announced, or waited
    for the slot that freed."""
    poll_s = float(getattr(request, "param", 3600.0))
    deployment_id = cast(UUID, cast(RunnerDeployment, probe.to_deployment(name="probe")).apply())
    client = open_redis(RedisSettings(url=redis_url))
    warm = runner.WarmRunner(deployment_id, 1, client, flow=probe, poll_s=poll_s)
    stop = threading.Event()
    thread = threading.Thread(target=warm.serve, args=(stop,), daemon=True)
    thread.start()
    wait_until(lambda: _listeners(client) > 0, 30, "the runner to listen")
    yield Served(deployment_id, warm, client)
    for event in _RELEASED.values():
        event.set()
    stop.set()
    thread.join(40)


def test_an_announced_run_starts_at_once_in_the_runner_and_reports_to_prefect(served: Served) -> None:
    flow_run_id = served.ask("run-20261125T020000-aaa001")
    _wait_for_state(flow_run_id, StateType.RUNNING)
    assert served.runner.running == 1
    _RELEASED["run-20261125T020000-aaa001"].set()
    _wait_for_state(flow_run_id, StateType.COMPLETED)
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(flow_run_id).deployment_id == served.deployment_id


def test_a_run_beyond_the_limit_waits_and_starts_when_the_slot_frees(served: Served) -> None:
    first = served.ask("run-20261125T020000-aaa002")
    _wait_for_state(first, StateType.RUNNING)
    second = served.ask("run-20261125T020000-aaa003", announce=False)
    time.sleep(2)
    assert _state(second) is StateType.SCHEDULED and served.runner.running == 1
    _RELEASED["run-20261125T020000-aaa002"].set()
    _wait_for_state(second, StateType.RUNNING)  # the freed slot looked for it
    _RELEASED["run-20261125T020000-aaa003"].set()
    _wait_for_state(second, StateType.COMPLETED)


@pytest.mark.parametrize("served", [0.5], indirect=True)
def test_a_run_cancelled_in_prefect_is_asked_to_stop_and_report(served: Served) -> None:
    run_id = "run-20261125T020000-aaa004"
    flow_run_id = served.ask(run_id)
    _wait_for_state(flow_run_id, StateType.RUNNING)
    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run_id, Cancelling(), force=True)
    wait_until(lambda: is_stop_requested(served.redis, run_id), 20, "the stop request",
               interval_s=0.1)
