"""Human pauses: a login-gated app pauses its sub-flow; resuming continues; a timeout reports it.

The device task is the ``test.login_gate`` double (tests/flows/login_gate.py): it
stops at the login wall exactly when the virtual phone's app is logged out.
"""

from __future__ import annotations

import threading

import pytest

from droidretriever.models import RunEventKind, SubTaskStatus, new_id
from flows.models import RetrieveRequest, RunOutcome
from flows.pauses import list_paused_flow_runs, resume_run
from flows.retrieve import retrieve
from flows.runtime import open_services
from storage import RunEventReader
from tests.farm.harness import wait_until
from tests.flows.conftest import FlowFarm
from tests.flows.login_gate import LOGIN_GATE

MEITUAN, MCDONALDS = "com.sankuai.meituan", "com.mcdonalds.gma.cn"


class _Background:
    """The flow in a thread, as ``droidretriever ask`` runs it while a person resumes elsewhere."""

    def __init__(self, request: RetrieveRequest) -> None:
        self.outcome: RunOutcome | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(request,), daemon=True)
        self._thread.start()

    def _run(self, request: RetrieveRequest) -> None:
        try:
            self.outcome = retrieve(request)
        except BaseException as exc:  # surfaced by join()
            self.error = exc

    def join(self, timeout_s: float) -> RunOutcome:
        self._thread.join(timeout_s)
        if self.error is not None:
            raise self.error
        assert self.outcome is not None, "the run did not finish"
        return self.outcome


def _set_logged_in(flow_farm: FlowFarm, package: str, on: bool) -> None:
    for serial in flow_farm.sim.serials:
        flow_farm.sim.control.set_logged_in(serial, package, on)


def test_login_gated_app_pauses_and_resuming_continues(flow_farm: FlowFarm) -> None:
    _set_logged_in(flow_farm, MEITUAN, False)
    run_id = new_id("run")
    running = _Background(RetrieveRequest(text="我最近的美团订单有哪些", run_id=run_id,
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
        outcome = retrieve(RetrieveRequest(text="我最近的美团订单和麦当劳巨无霸价格",
                                           apps=("Meituan", "McDonald's"),
                                           navigate_task=LOGIN_GATE))
    finally:
        _set_logged_in(flow_farm, MEITUAN, True)
    by_package = {a.package: a for a in outcome.report.apps}
    assert by_package[MEITUAN].status is SubTaskStatus.NEEDS_USER
    assert "nobody took over" in by_package[MEITUAN].reason
    assert by_package[MCDONALDS].status is SubTaskStatus.COMPLETED
    assert "nobody took over" in outcome.report.markdown
