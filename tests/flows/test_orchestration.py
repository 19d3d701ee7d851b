"""The retrieve flow's orchestration with the no-op navigate (``probe.navigate``).

Real Prefect (test harness), real Celery workers on virtual phones, real Redis
and S3: what is checked is the plumbing, not the copilot.
"""

from __future__ import annotations

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags

from core.models import RunStatus, SubTaskStatus
from device_farm.sim import ControlRequest
from flows.models import RetrieveRequest
from flows.retrieve import run_retrieve
from flows.runtime import open_services
from storage import ManifestStore, open_object_store
from tasks.navigate.probe import PROBE_NAVIGATE
from tests.flows.conftest import FlowFarm


def test_apps_without_an_edge_run_in_parallel_on_different_phones(flow_farm: FlowFarm) -> None:
    request = RetrieveRequest(text="Is a Big Mac cheaper on Meituan or Ele.me?",
                              navigate_task=PROBE_NAVIGATE)
    # Slow phones: each sub-task takes seconds, so running both on one phone would show.
    for serial in flow_farm.sim.serials:
        flow_farm.sim.control.slow_screenshot(serial, 2.0)
    try:
        outcome = run_retrieve(request)
    finally:
        flow_farm.sim.control.request(ControlRequest(op="clear_faults"))

    manifest = ManifestStore(open_object_store(flow_farm.settings)).read(outcome.run_id)
    assert manifest.status is RunStatus.COMPLETED
    assert manifest.plan is not None
    assert {s.package for s in manifest.plan.subtasks} == {"com.sankuai.meituan", "me.ele"}
    assert set(manifest.subtasks.values()) == {SubTaskStatus.COMPLETED}
    assert manifest.report_key == outcome.markdown_key
    store = open_services(flow_farm.settings).store
    assert b"Meituan" in store.get_bytes(outcome.html_key)

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            tags=FlowRunFilterTags(all_=[f"run:{outcome.run_id}"])))
    by_name = {r.name: r for r in runs}
    main = next(r for r in runs if r.name.startswith("ask: Is a Big Mac"))
    labels = {s.app_label for s in manifest.plan.subtasks}
    assert {f"app:{label}" for label in labels} <= set(main.tags)
    devices = {t for t in main.tags if t.startswith("device:")}
    assert len(devices) == 2, f"both apps ran on one phone: {main.tags}"
    for label in labels:  # one readable sub-flow per app
        assert any(name.startswith(f"{label} · ") for name in by_name), by_name
