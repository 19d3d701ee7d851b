"""A run survives a restart of Redis, of the S3 store and of the Prefect server in its middle.

Each test asks the Big Mac question on the package's stack (two virtual phones with
realistic latency), restarts one real service while the run is under way, and then
checks what a person gets: the run completed, its report cites both apps' prices,
exactly one capture per app, nothing stored twice, nothing left in the spool.
"""

from __future__ import annotations

from uuid import UUID

import pytest
from prefect.client.orchestration import get_client

from core.models import RunEventKind
from droidretriever.testing import LocalStack
from flows.runtime import FlowServices
from storage import RunEventReader, RunKeys, S3ObjectStore, open_object_store
from tests.flows.restarts.conftest import assert_full_report, start_run, wait_for_navigation
from tests.support.farm import wait_until

pytestmark = [pytest.mark.services, pytest.mark.slow]


def test_redis_stopped_mid_run_and_started_6_s_later(local_stack: LocalStack,
                                                     services: FlowServices) -> None:
    run_id, running = start_run(services)
    wait_for_navigation(services, run_id)
    local_stack.restart("redis", down_s=6)
    outcome = running.join(180)

    assert_full_report(services, outcome)
    kinds = [e.kind for e in RunEventReader(services.redis).read_after(run_id)]
    assert kinds[-1] is RunEventKind.RUN_FINISHED and RunEventKind.ERROR not in kinds
    # A sub-task whose message the broker handed out again after the restart ran once.
    assert kinds.count(RunEventKind.SUBTASK_STARTED) == 2, kinds


def test_s3_killed_mid_run_and_started_again(local_stack: LocalStack,
                                            services: FlowServices) -> None:
    run_id, running = start_run(services)
    wait_for_navigation(services, run_id)
    local_stack.restart("s3", down_s=5, kill=True)
    outcome = running.join(180)

    manifest = assert_full_report(services, outcome)
    # What was spooled while the store was down reaches it (as `droidretriever up` flushes).
    store = open_object_store(local_stack.settings)
    store.flush()
    assert store.spool_size().entries == 0
    direct = S3ObjectStore(local_stack.settings.s3)
    keys = RunKeys(run_id)
    assert direct.exists(keys.manifest) and direct.exists(outcome.html_key)
    assert all(direct.exists(keys.capture_image(cid)) for cid in manifest.capture_ids)


def test_prefect_server_restarted_mid_run(local_stack: LocalStack,
                                          services: FlowServices) -> None:
    """Killed once the plan is out and the run is tagged with its apps, the moment before the
    apps' sub-flows are created (each with a new Prefect client, which does not wait for a
    server that is not there), and started again."""
    run_id, running = start_run(services)
    for event in RunEventReader(services.redis).iter_live(run_id, idle_timeout_s=120,
                                                          block_s=0.01):
        if event.kind is RunEventKind.PLAN_READY:
            break
    flow_run_id = UUID(services.manifests.read(run_id).prefect_flow_run_id or "")
    with get_client(sync_client=True) as client:
        wait_until(lambda: any(t.startswith("app:") for t in client.read_flow_run(flow_run_id).tags),
                   30, "the run tagged with its apps", interval_s=0.01)
    local_stack.restart("prefect", down_s=5, kill=True)
    outcome = running.join(240)

    assert_full_report(services, outcome)
