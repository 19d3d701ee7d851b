"""Prefect tells how a run went: a person's pause of a phone shows its app sub-flow Paused (and
Running again when given back), a stopped run and its cut-short sub-flow end Cancelled, and the
stopped run's report is partial and lists what the person did, with time and phone.

Real Prefect (test harness), Redis, S3, virtual phones with a worker each; the person's commands
go through :class:`flows.steering.Steering`, as the dashboard's and the CLI's do.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from prefect.client.schemas.objects import FlowRun, StateType

from core.models import RunStatus, SubTaskStatus, new_id
from device_farm.models import DeviceState
from device_farm.sim import ControlRequest
from flows.models import RetrieveRequest
from flows.pauses import resume_run
from flows.runtime import open_services
from flows.steering import SteerAction, Steering, SteerRequest
from tests.flows.conftest import FlowFarm
from tests.support.background import BackgroundRun

pytestmark = [pytest.mark.services, pytest.mark.slow]

PERSON = "browser test"


def _steering(farm: FlowFarm) -> Steering:
    services = open_services(farm.settings)

    def resume(run_id: str, action: str, note: str, app: str | None) -> list[str]:
        return resume_run(run_id, "skip" if action == "skip" else "continue", note, app,
                          settings=farm.settings)

    return Steering(services.redis, services.registry, services.manifests, services.events, resume)


def _wait(what: str, check: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"{what} did not happen within {timeout_s:.0f} s")


def _app_flow_runs(run_id: str) -> list[FlowRun]:
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            tags=FlowRunFilterTags(all_=[f"run:{run_id}", f"app:{'Settings'}"])))
    return [r for r in runs if r.name.startswith("Settings ·")]


def _state_of_app_flow(run_id: str) -> StateType | None:
    runs = _app_flow_runs(run_id)
    return runs[0].state.type if runs and runs[0].state is not None else None


def test_a_paused_phone_shows_paused_and_a_stopped_run_ends_cancelled(flow_farm: FlowFarm) -> None:
    run_id = new_id("run")
    registry, steering = flow_farm.registry, _steering(flow_farm)
    for serial in flow_farm.sim.serials:  # slow phones: the copilot is mid-way when we pause
        flow_farm.sim.control.slow_screenshot(serial, 1.5)
    run = BackgroundRun(RetrieveRequest(text="Which permissions does Meituan have?", run_id=run_id))
    try:
        _wait("a phone running the sub-task", lambda: any(
            s.lease_run == run_id and s.state is DeviceState.LEASED for s in registry.statuses()),
            120)
        paused = steering.apply(run_id, SteerRequest(action=SteerAction.PAUSE), PERSON)
        assert paused.serial is not None
        _wait("the Settings sub-flow Paused in Prefect",
              lambda: _state_of_app_flow(run_id) is StateType.PAUSED, 60)
        steering.apply(run_id, SteerRequest(action=SteerAction.RESUME), PERSON)
        _wait("the Settings sub-flow Running again",
              lambda: _state_of_app_flow(run_id) is StateType.RUNNING, 60)
        steering.apply(run_id, SteerRequest(action=SteerAction.STOP), PERSON)
        outcome = run.join(240)
    finally:
        flow_farm.sim.control.request(ControlRequest(op="clear_faults"))

    assert outcome.stopped and outcome.flow_run_id is not None
    with get_client(sync_client=True) as client:
        retrieve_run = client.read_flow_run(outcome.flow_run_id)  # type: ignore[arg-type]
    assert retrieve_run.state is not None and retrieve_run.state.type is StateType.CANCELLED
    assert _state_of_app_flow(run_id) is StateType.CANCELLED
    manifest = open_services(flow_farm.settings).manifests.read(run_id)
    assert manifest.status is RunStatus.STOPPED

    report = outcome.report
    assert report.partial and "Settings" in report.partial
    (app,) = report.apps
    assert app.status is not SubTaskStatus.COMPLETED, app
    acts = [(i.actor, i.serial, i.what) for i in report.interventions]
    assert (PERSON, paused.serial, f"paused the copilot on {paused.serial}") in acts, acts
    assert acts[-1][0] == PERSON and acts[-1][2].startswith("asked to stop and report"), acts
