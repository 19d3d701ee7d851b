"""A whole local stack of its own for the restart tests: Redis (append-only), SeaweedFS S3, the
Prefect server and two virtual phones with realistic latency, a worker each and the farm monitor,
started by the same code as ``droidretriever up`` (``droidretriever.testing.LocalStack``).

The tests stop, kill and restart these real services and processes during real runs, so they
cannot share the session's services; the stack lives as long as this package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.models import RunManifest, RunStatus, SubTaskStatus, new_id
from droidretriever.testing import LocalStack
from flows.models import RetrieveRequest, RunOutcome
from flows.runtime import FlowServices, open_services
from storage import RunKeys
from tests.flows.reports import price_citation, run_captures
from tests.support.background import BackgroundRun
from tests.support.farm import wait_until

QUESTION = "Is a Big Mac cheaper on Meituan or Ele.me?"
# One capture per app, each holding the app's Big Mac price (the virtual phones' data).
PRICES = {"com.sankuai.meituan": "25.5", "me.ele": "22.9"}
CLI = str(Path(sys.executable).parent / "droidretriever")


@pytest.fixture(scope="package")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with LocalStack(tmp_path_factory.mktemp("restarts") / "state", phones=2) as stack:
        yield stack


@pytest.fixture
def services(local_stack: LocalStack) -> FlowServices:
    return open_services(local_stack.settings)


def navigating(services: FlowServices, run_id: str | None = None) -> str | None:
    """The run a phone is navigating for now (``run_id``'s, when given), else None."""
    for status in services.registry.statuses():
        if status.inflight is not None and status.lease_run and status.lease_run == (
                run_id or status.lease_run):
            return status.lease_run
    return None


def start_run(services: FlowServices) -> tuple[str, BackgroundRun]:
    """The question asked in the background (as `ask` runs it), once every phone is idle."""
    wait_for_idle_phones(services)
    run_id = new_id("run")
    return run_id, BackgroundRun(RetrieveRequest(text=QUESTION, run_id=run_id))


def wait_for_navigation(services: FlowServices, run_id: str) -> None:
    """Until a phone navigates for ``run_id`` (the middle of the run)."""
    wait_until(lambda: navigating(services, run_id), 120, "a phone to navigate for the run",
               interval_s=0.05)


def run_cli(*args: str, timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    """``droidretriever ARGS`` as a person runs it, against the package's stack."""
    return subprocess.run([CLI, *args], env={**os.environ, "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=timeout_s, check=False)


def assert_full_report(services: FlowServices, outcome: RunOutcome) -> RunManifest:
    """Completed, both apps' prices cited, exactly one capture per app, none stored twice."""
    manifest = services.manifests.read(outcome.run_id)
    assert manifest.status is RunStatus.COMPLETED, manifest.error
    assert set(manifest.subtasks.values()) == {SubTaskStatus.COMPLETED}, manifest.subtasks
    assert manifest.report_key == outcome.markdown_key
    assert services.store.exists(outcome.markdown_key) and services.store.exists(outcome.html_key)
    assert len(manifest.capture_ids) == len(set(manifest.capture_ids)) == len(PRICES)
    prefix = RunKeys(outcome.run_id).key("captures") + "/"
    stored = sorted(i.key for i in services.store.list_objects(prefix) if i.key.endswith(".png"))
    assert stored == sorted(f"{prefix}{cid}.png" for cid in manifest.capture_ids)
    captures = run_captures(services, outcome)
    for package, price in PRICES.items():
        price_citation(outcome.report, captures, package, price)
    return manifest


def wait_for_idle_phones(services: FlowServices) -> None:
    """Every phone beats, is idle and leased to nobody (between tests)."""
    wait_until(lambda: all(s.heartbeat_alive and s.lease_run is None and s.inflight is None
                           and s.state.value == "idle" for s in services.registry.statuses()),
               90, "every phone idle")
