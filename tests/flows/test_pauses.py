"""Human pauses: a login-gated app pauses its sub-flow; resuming continues; a timeout reports it.

The first test goes through the real copilot (``copilot.navigate``): Gmail
logged out on the virtual phones, the rule decomposer's sub-task opens it,
the copilot meets the login wall and hands over; the person (here the
simulator's control API) logs in and resumes, and the sub-task finishes with a
capture. The others use the ``test.login_gate`` double (tests/flows/login_gate.py),
which stops at the login wall exactly when the app is logged out and does
nothing else, so the pause machinery is tested without a navigation's cost:
with a second app that must go on while one waits, and a pause that times out.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from prefect.client.schemas.objects import StateType
from prefect.input.actions import read_flow_run_input
from prefect.input.run_input import keyset_from_paused_state
from prefect.settings import PREFECT_API_URL

from core.models import RiskCategory, RunEventKind, RunStatus, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.models import DeviceState
from flows.dispatch import LeaseKeeper
from flows.errors import RunOrphanedError
from flows.keys import waiting_key
from flows.models import RetrieveRequest
from flows.pauses import list_paused_flow_runs, resume_run
from flows.retrieve import run_retrieve
from flows.runtime import open_services
from inference.perception import parse_hierarchy
from storage import RunEventReader
from tests.flows.conftest import FlowFarm
from tests.flows.login_gate import LOGIN_GATE
from tests.flows.reports import run_captures
from tests.support.background import BackgroundRun
from tests.support.farm import wait_until

MEITUAN, MCDONALDS, GMAIL = "com.sankuai.meituan", "com.mcdonalds.gma.cn", "com.google.android.gm"


def _set_logged_in(flow_farm: FlowFarm, package: str, on: bool) -> None:
    for serial in flow_farm.sim.serials:
        flow_farm.sim.control.set_logged_in(serial, package, on)


def _log_in_on_the_phone(flow_farm: FlowFarm, serial: str, package: str, button: str) -> None:
    """What the person does: signs the account in, then taps the sign-in screen's button."""
    flow_farm.sim.control.set_logged_in(serial, package, True)
    driver = AdbDriver(serial, port=flow_farm.sim.port)
    try:
        seen = driver.observe()
        elements = parse_hierarchy(seen.hierarchy_xml, width=seen.width, height=seen.height).elements
        labels = [e.label for e in elements]
        target = next((e for e in elements if e.label == button), None)
        assert target is not None, f"the phone does not show the {button!r} button: {labels}"
        driver.tap(target.bounds.center)
    finally:
        driver.close()


def test_copilot_at_a_login_wall_pauses_and_resuming_finishes(flow_farm: FlowFarm) -> None:
    _set_logged_in(flow_farm, GMAIL, False)
    run_id = new_id("run")
    services = open_services(flow_farm.settings)
    try:
        running = BackgroundRun(RetrieveRequest(text="What is my latest email in Gmail?", run_id=run_id))
        paused = wait_until(lambda: list_paused_flow_runs(run_id), 180, "the Gmail sub-flow to pause")
        flow_run = paused[0]
        assert flow_run.name.startswith("Gmail · ")
        # The Prefect UI's form (the RunInput's schema) says why: a login, in Gmail.
        assert flow_run.state is not None
        keyset = keyset_from_paused_state(flow_run.state)
        form = read_flow_run_input(keyset["schema"], flow_run_id=flow_run.id)
        assert isinstance(form, dict), form
        defaults = {name: field.get("default") for name, field in form["properties"].items()}
        assert defaults["app"] == "Gmail"
        assert defaults["category"] == RiskCategory.LOGIN.value, defaults
        description = read_flow_run_input(keyset["description"], flow_run_id=flow_run.id)
        assert isinstance(description, str) and "needs a person (login)" in description
        leased = [s.info.serial for s in services.registry.statuses() if s.lease_run == run_id]
        assert len(leased) == 1, "the paused run should keep its phone"

        _log_in_on_the_phone(flow_farm, leased[0], GMAIL, "Next")  # Gmail's "Sign in" screen
        assert resume_run(run_id, note="logged in") == [flow_run.name]
        outcome = running.join(240)
    finally:
        _set_logged_in(flow_farm, GMAIL, True)

    manifest = services.manifests.read(run_id)
    events = RunEventReader(services.redis).read_after(run_id)
    story = "\n".join(f"{e.kind.value}: {e.message}" for e in events)
    assert set(manifest.subtasks.values()) == {SubTaskStatus.COMPLETED}, story
    captures = run_captures(services, outcome)
    assert captures and {c.package for c in captures.values()} == {GMAIL}
    kinds = [e.kind for e in events]
    assert kinds.index(RunEventKind.NEEDS_USER) < kinds.index(RunEventKind.RESUMED)
    assert kinds.index(RunEventKind.RESUMED) < max(i for i, k in enumerate(kinds)
                                                   if k is RunEventKind.CAPTURE_SAVED)
    assert outcome.report.apps[0].status is SubTaskStatus.COMPLETED


def test_login_gated_app_pauses_and_resuming_continues(flow_farm: FlowFarm) -> None:
    _set_logged_in(flow_farm, MEITUAN, False)
    run_id = new_id("run")
    running = BackgroundRun(RetrieveRequest(text="我最近的美团订单有哪些", run_id=run_id,
                                          navigate_task=LOGIN_GATE))
    paused = wait_until(lambda: list_paused_flow_runs(run_id), 120, "the Meituan sub-flow to pause")
    assert paused[0].name.startswith("Meituan")
    services = open_services(flow_farm.settings)
    manifest = services.manifests.read(run_id)
    assert SubTaskStatus.NEEDS_USER in manifest.subtasks.values() or manifest.status.value == "paused"
    holder = {s.info.serial: s.lease_run for s in services.registry.statuses()}
    assert run_id in holder.values(), f"no phone is leased to the paused run: {holder}"

    _set_logged_in(flow_farm, MEITUAN, True)  # the person logs in on the phone
    assert resume_run(run_id, note="logged in") == [paused[0].name]
    outcome = running.join(180)

    statuses = services.manifests.read(run_id).subtasks
    assert set(statuses.values()) == {SubTaskStatus.COMPLETED}, statuses
    kinds = [e.kind for e in RunEventReader(services.redis).read_after(run_id)]
    assert kinds.index(RunEventKind.NEEDS_USER) < kinds.index(RunEventKind.RESUMED)
    assert outcome.report.apps[0].status is SubTaskStatus.COMPLETED


def test_pause_timeout_names_the_app_and_other_apps_go_on(flow_farm: FlowFarm,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S", "3")
    _set_logged_in(flow_farm, MEITUAN, False)
    _set_logged_in(flow_farm, MCDONALDS, True)
    try:
        outcome = run_retrieve(RetrieveRequest(text="我最近的美团订单和麦当劳巨无霸价格",
                                           apps=("Meituan", "McDonald's"),
                                           navigate_task=LOGIN_GATE))
    finally:
        _set_logged_in(flow_farm, MEITUAN, True)
    by_package = {a.package: a for a in outcome.report.apps}
    assert by_package[MEITUAN].status is SubTaskStatus.NEEDS_USER
    assert "nobody took over" in by_package[MEITUAN].reason
    assert by_package[MCDONALDS].status is SubTaskStatus.COMPLETED
    assert "nobody took over" in outcome.report.markdown


_RUN_IN_ANOTHER_PROCESS = """
import sys
from flows.models import RetrieveRequest
from flows.retrieve import run_retrieve
from tests.flows.login_gate import LOGIN_GATE
run_retrieve(RetrieveRequest(text=sys.argv[1], run_id=sys.argv[2], navigate_task=LOGIN_GATE))
"""


def test_resuming_a_run_whose_process_died_says_so_and_marks_it_crashed(
    flow_farm: FlowFarm,
) -> None:
    """`droidretriever ask` killed while paused: resume must not report a resume nobody runs."""
    _set_logged_in(flow_farm, MEITUAN, False)
    run_id = new_id("run")
    env = {**os.environ, **flow_farm.env, "PREFECT_API_URL": str(PREFECT_API_URL.value())}
    asker = subprocess.Popen(
        [sys.executable, "-c", _RUN_IN_ANOTHER_PROCESS, "我最近的美团订单有哪些", run_id],
        env=env, cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    services = open_services(flow_farm.settings)
    try:
        paused = wait_until(lambda: list_paused_flow_runs(run_id), 120, "the Meituan sub-flow to pause")
        serial = next(t.removeprefix("device:") for t in paused[0].tags if t.startswith("device:"))
        assert services.registry.leases.holder(serial) == run_id  # kept while it waits
        assert services.redis.exists(waiting_key(paused[0].id))
        asker.kill()  # the terminal closed, the machine rebooted ...
        asker.wait(30)
        wait_until(lambda: not services.redis.exists(waiting_key(paused[0].id)), 30,
                   "the dead process's beacon to go out")
        assert services.registry.status(serial).state is DeviceState.PAUSED_FOR_USER

        with pytest.raises(RunOrphanedError, match="ended while Meituan") as caught:
            resume_run(run_id, note="logged in")
        assert "ask the question again" in caught.value.hint
    finally:
        if asker.poll() is None:
            asker.kill()
        _set_logged_in(flow_farm, MEITUAN, True)

    assert list_paused_flow_runs(run_id) == []
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"run:{run_id}"])))
    assert len(runs) >= 2 and any(r.name.startswith("Meituan") for r in runs)  # and the parent
    assert {r.state.type for r in runs if r.state is not None} == {StateType.CRASHED}
    manifest = services.manifests.read(run_id)
    assert manifest.status is RunStatus.CRASHED and "ended while" in (manifest.error or "")
    events = RunEventReader(services.redis).read_after(run_id)
    assert [e.kind for e in events[-2:]] == [RunEventKind.ERROR, RunEventKind.RUN_FINISHED]
    assert "ended while" in events[-2].message and events[-1].message == "crashed"
    # The phone goes back to the farm at its worker's next heartbeat.
    wait_until(lambda: services.registry.status(serial).state is DeviceState.IDLE
               and services.registry.leases.holder(serial) is None, 30, "the phone freed")


def test_a_waiting_flow_takes_back_a_lease_lost_with_redis_and_yields_one_taken_by_another_run(
    flow_farm: FlowFarm,
) -> None:
    """The lease is how `resume` tells a live pause from a dead one, so it must survive Redis."""
    services = open_services(flow_farm.settings)
    leases = services.registry.leases
    serial = flow_farm.sim.serials[0]
    keeper = LeaseKeeper(leases, serial, "run-waiting", ttl_s=0.6)
    try:
        assert keeper.start()
        services.redis.delete(leases.key(serial))  # what a Redis restart without persistence does
        wait_until(lambda: leases.holder(serial) == "run-waiting", 5, "the lease to be taken back")
        leases.release(serial, "run-waiting")
        assert leases.acquire(serial, "run-other")
        wait_until(lambda: not keeper.held, 5, "the keeper to let the other run have it")
        assert leases.holder(serial) == "run-other"
    finally:
        keeper.stop()
        leases.release(serial, "run-other")
        leases.release(serial, "run-waiting")
