"""The API as the tests use it: a real ``python -m droidretriever.api`` process and the runner,
against the test's Redis, S3, Prefect and virtual phones; clients with the token or a session."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from prefect.client.orchestration import get_client
from prefect.exceptions import ObjectNotFound

from core.config import Settings
from core.models import utcnow
from deploy.farm import ProcessRecord, is_running, start_process
from deploy.local import read_api_token
from flows.runner import DEPLOYMENT
from tests.support.farm import RunningFarm, wait_until

CSRF = {"x-droidretriever": "1"}


@dataclass
class ApiStack:
    """The API and runner processes, the farm under them, and how to reach them."""

    base: str
    settings: Settings
    env: dict[str, str]
    farm: RunningFarm
    api: ProcessRecord
    runner: ProcessRecord

    @property
    def token(self) -> str:
        token = read_api_token(self.settings)
        assert token is not None, "the API generated no token"
        return token

    def client(self) -> httpx.Client:
        """A program's client: the bearer token."""
        return httpx.Client(base_url=self.base, timeout=30.0,
                            headers={"authorization": f"Bearer {self.token}"})

    def login_link(self) -> str:
        with self.client() as client:
            response = client.post("/auth/codes")
        assert response.status_code == 200, response.text
        return str(response.json()["url"])

    @contextmanager
    def browser_client(self) -> Iterator[httpx.Client]:
        """A browser's client: a session cookie from a login link, and the CSRF header."""
        with httpx.Client(base_url=self.base, timeout=30.0, headers=CSRF) as client:
            response = client.get(self.login_link())
            assert response.status_code == 200 and "dr_session" in client.cookies, response.text
            yield client

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in (self.api.log_path,
                                                                 self.runner.log_path))


def start_api(state_dir: Path, env: dict[str, str], base: str) -> ProcessRecord:
    """``python -m droidretriever.api``, waited for until /health answers 401 (it is up)."""
    record = start_process(state_dir, "api", ["python", "-m", "droidretriever.api"], env=env)

    def up() -> bool:
        if not is_running(record):
            raise AssertionError(f"the API exited:\n{record.log_path.read_text()[-3000:]}")
        try:
            return httpx.get(f"{base}/health", timeout=1.0).status_code == 401
        except httpx.HTTPError:
            return False

    wait_until(up, 60, "the API to answer", interval_s=0.3)
    return record


def start_runner(state_dir: Path, env: dict[str, str]) -> ProcessRecord:
    """``python -m flows.runner``, waited for until its deployment is polled."""
    record = start_process(state_dir, "runner", ["python", "-m", "flows.runner"], env=env)

    def polled() -> bool:
        if not is_running(record):
            raise AssertionError(f"the runner exited:\n{record.log_path.read_text()[-3000:]}")
        try:
            with get_client(sync_client=True) as client:
                deployment = client.read_deployment_by_name(DEPLOYMENT)
        except ObjectNotFound:
            return False
        last = deployment.last_polled
        return last is not None and (utcnow() - last).total_seconds() < 30

    wait_until(polled, 90, "the runner to serve the dashboard's runs", interval_s=0.5)
    return record


@contextmanager
def watching(stack: ApiStack, run_id: str) -> Iterator[None]:
    """Poll the run's steering state as its open page does (``watching=true``, every 2 s), so
    its planned actions wait the confirm window, as when a person watches."""
    import threading

    stop = threading.Event()

    def poll() -> None:
        with stack.client() as client:
            while not stop.is_set():
                client.get(f"/runs/{run_id}/control", params={"watching": "true"})
                stop.wait(2.0)

    thread = threading.Thread(target=poll, daemon=True, name=f"watch-{run_id}")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)


def wait_for_event(client: httpx.Client, run_id: str, kind: str, timeout_s: float,
                   after: int = 0) -> dict[str, Any]:
    """The first event of ``kind`` after seq ``after``, read from the run's SSE stream."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for event in read_events(client, run_id, after, timeout_s=2.0):
            after = int(str(event["seq"]))
            if event["kind"] == kind:
                return event
    raise AssertionError(f"no {kind} event of {run_id} within {timeout_s} s")


def read_events(client: httpx.Client, run_id: str, after: int = 0, *,
                timeout_s: float = 3.0, last_event_id: str | None = None) -> list[dict[str, Any]]:
    """What the SSE stream sends within ``timeout_s`` (or until it ends), as parsed events."""
    import json

    headers = {"last-event-id": last_event_id} if last_event_id is not None else {}
    params = {"after": after} if last_event_id is None else {}
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    try:
        with client.stream("GET", f"/runs/{run_id}/events", params=params, headers=headers,
                           timeout=httpx.Timeout(timeout_s + 5, read=timeout_s)) as response:
            assert response.status_code == 200, response.read()
            data: list[str] = []
            name = "message"
            for line in response.iter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line.startswith("event:"):
                    name = line[6:].strip()
                elif line == "" and data:
                    if name == "end":
                        return events
                    events.append(json.loads("\n".join(data)))
                    data, name = [], "message"
                if time.monotonic() > deadline:
                    break
    except httpx.ReadTimeout:
        pass
    return events
