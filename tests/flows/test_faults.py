"""A worker killed during navigation: the run still finishes, with no duplicated captures."""

from __future__ import annotations

import os
import signal

from core.config import LatencyProfile
from core.models import RunStatus, new_id
from device_farm.sim import ControlRequest
from flows.models import RetrieveRequest
from flows.runtime import open_services
from storage import RunKeys
from tests.flows.conftest import FlowFarm
from tests.flows.reports import price_citation, run_captures
from tests.support.background import BackgroundRun
from tests.support.farm import wait_until

MCDONALDS = "com.mcdonalds.gma.cn"


def test_killed_worker_mid_navigation_run_finishes_without_duplicates(flow_farm: FlowFarm) -> None:
    services = open_services(flow_farm.settings)
    flow_farm.sim.control.request(ControlRequest(op="set_latency", profile=LatencyProfile.REALISTIC))
    run_id = new_id("run")
    try:
        running = BackgroundRun(RetrieveRequest(text="How much is a Big Mac at McDonald's?",
                                              run_id=run_id))

        def navigating() -> str | None:
            for status in services.registry.statuses():
                if status.lease_run == run_id and status.inflight is not None:
                    return status.info.serial
            return None

        victim = wait_until(navigating, 120, "a phone to navigate for the run", interval_s=0.05)
        os.kill(flow_farm.procs.workers[victim].pid, signal.SIGKILL)
        outcome = running.join(240)
    finally:
        flow_farm.sim.control.request(ControlRequest(op="set_latency", profile=LatencyProfile.ZERO))
    flow_farm.restart_worker(victim)

    manifest = services.manifests.read(run_id)
    assert manifest.status is RunStatus.COMPLETED
    assert len(manifest.capture_ids) == len(set(manifest.capture_ids)) >= 1
    stored = [i.key for i in services.store.list_objects(RunKeys(run_id).key("captures") + "/")
              if i.key.endswith(".png")]
    assert len(stored) == len(manifest.capture_ids), stored  # the retry overwrote, not added
    captures = run_captures(services, outcome)
    assert all(c.package == MCDONALDS for c in captures.values())
    price_citation(outcome.report, captures, MCDONALDS, "24.0")
