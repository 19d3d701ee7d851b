"""Stop-and-report mid-run, and facts flowing along plan edges (MobileSteward's information flow)."""

from __future__ import annotations

import threading
import time
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType

from core.models import (
    Edge,
    PageMode,
    Plan,
    Query,
    RunStatus,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    Trace,
    new_id,
)
from device_farm.sim import ControlRequest
from flows.models import AppOutcome, RetrieveRequest
from flows.retrieve import app_groups, rewrite_goals, run_retrieve
from flows.runtime import open_services
from flows.stop import request_stop
from storage import ManifestStore, StorageError, open_object_store
from tasks.navigate.probe import PROBE_NAVIGATE
from tests.flows.conftest import FlowFarm

SHOP = SubTask(id="shop-1", app_label="Meituan", package="com.sankuai.meituan",
               goal="Find the nearest McDonald's", search_term="麦当劳")
ROUTE = SubTask(id="route-1", app_label="Amap", package="com.autonavi.minimap",
                goal="Driving time to the store", page_mode=PageMode.FOCUSED)


def _done(subtask: SubTask, *facts: str) -> SubTaskResult:
    return SubTaskResult(subtask_id=subtask.id, status=SubTaskStatus.COMPLETED,
                         trace=Trace(subtask_id=subtask.id), facts=facts)


def test_upstream_facts_rewrite_the_downstream_goal() -> None:
    edge = Edge(source="shop-1", target="route-1", info="the store's address")
    plan = Plan(query=Query(text="How long to drive to the nearest McDonald's?"),
                subtasks=(ROUTE, SHOP), edges=(edge,), decomposer="rules")
    # The app that feeds another runs first, whatever order the plan lists them in.
    assert [package for package, _ in app_groups(plan)] == [SHOP.package, ROUTE.package]
    upstream = [AppOutcome(package=SHOP.package, app_label="Meituan",
                           results=(_done(SHOP, "麦当劳 (漕溪北路店) 漕溪北路 88 号"),))]
    (rewritten,) = rewrite_goals([ROUTE], [edge], upstream)
    assert rewritten.goal.startswith("Driving time to the store")
    assert "from Meituan (the store's address): 麦当劳 (漕溪北路店) 漕溪北路 88 号" in rewritten.goal
    # No facts upstream (or no edge): the goal is left as it was.
    assert rewrite_goals([ROUTE], [edge], [AppOutcome(package=SHOP.package, app_label="Meituan",
                                                      results=(_done(SHOP),))]) == [ROUTE]
    assert rewrite_goals([ROUTE], [], upstream) == [ROUTE]


def test_stop_and_report_uses_what_was_done_so_far(flow_farm: FlowFarm) -> None:
    run_id = new_id("run")
    # Two search terms for one app: two sub-tasks in sequence on one phone.
    request = RetrieveRequest(text='Compare "Big Mac" and "McChicken" on Meituan',
                              navigate_task=PROBE_NAVIGATE, run_id=run_id)
    redis = open_services(flow_farm.settings).redis
    for serial in flow_farm.sim.serials:  # slow phones: each sub-task takes seconds
        flow_farm.sim.control.slow_screenshot(serial, 3.0)
    manifests = ManifestStore(open_object_store(flow_farm.settings))

    def stop_once_the_first_subtask_runs() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if SubTaskStatus.RUNNING in manifests.read(run_id).subtasks.values():
                    break
            except StorageError:  # no manifest yet
                pass
            time.sleep(0.1)
        request_stop(redis, run_id)

    stopper = threading.Thread(target=stop_once_the_first_subtask_runs)
    stopper.start()
    try:
        outcome = run_retrieve(request)
    finally:
        stopper.join()
        flow_farm.sim.control.request(ControlRequest(op="clear_faults"))

    assert outcome.stopped
    manifest = manifests.read(run_id)
    assert manifest.status is RunStatus.STOPPED
    # Prefect shows the stop: the run Cancelled (its report is its result all the same).
    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(UUID(outcome.flow_run_id or ""))
    assert flow_run.state is not None and flow_run.state.type is StateType.CANCELLED
    assert outcome.report.partial, "a stopped run's report says it is partial"
    statuses = sorted(status.value for status in manifest.subtasks.values())
    # The sub-task on the phone when the stop came finished; the next one never started.
    assert SubTaskStatus.COMPLETED.value in statuses
    assert len(manifest.subtasks) == 2 and SubTaskStatus.PENDING.value in statuses
    assert manifest.report_key == outcome.markdown_key  # a report was still written
    assert outcome.report.apps, "the report lists the app and its status"
