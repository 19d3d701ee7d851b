"""Processes that die: a killed ``ask`` is found and its run marked crashed; ``up`` restarts a
dead device worker. Both through the real command line, on the package's stack.
"""

from __future__ import annotations

import signal
import subprocess

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from prefect.client.schemas.objects import StateType

from core.models import RunEventKind, RunStatus, SubTaskStatus, new_id
from deploy.farm import is_running, read_manifest, worker_process_name
from device_farm.models import DeviceState
from droidretriever.testing import LocalStack
from flows.keys import alive_key
from flows.models import RetrieveRequest
from flows.retrieve import run_retrieve
from flows.runtime import FlowServices
from storage import RunEventReader
from tests.flows.restarts.conftest import (
    CLI,
    QUESTION,
    assert_full_report,
    navigating,
    run_cli,
    wait_for_idle_phones,
)
from tests.support.farm import wait_until

pytestmark = [pytest.mark.services, pytest.mark.slow]


def test_a_killed_ask_is_found_and_its_run_marked_crashed(local_stack: LocalStack,
                                                          services: FlowServices) -> None:
    wait_for_idle_phones(services)
    asker = subprocess.Popen([CLI, "ask", QUESTION], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        run_id = wait_until(lambda: navigating(services), 180, "a phone to navigate for the run",
                            interval_s=0.05)
        asker.send_signal(signal.SIGKILL)  # the terminal closed, the machine rebooted ...
        asker.wait(30)
    finally:
        if asker.poll() is None:
            asker.kill()

    # Found once the run's beacon is out (one lease TTL, 5 s here), by `status` or by the
    # subscriptions service's sweep (every 10 s), whichever looks first.
    wait_until(lambda: not services.redis.exists(alive_key(run_id)), 30, "the beacon to go out")
    status = run_cli("status")
    assert status.returncode == 0, status.stdout + status.stderr

    def states() -> set[StateType]:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[f"run:{run_id}"])))
        assert any(r.name.startswith("ask: ") for r in runs), [r.name for r in runs]
        return {r.state.type for r in runs if r.state is not None}

    wait_until(lambda: states() == {StateType.CRASHED}, 30, "the run marked crashed")
    manifest = services.manifests.read(run_id)
    assert manifest.status is RunStatus.CRASHED and "process running it ended" in (manifest.error
                                                                                     or "")
    assert SubTaskStatus.RUNNING not in manifest.subtasks.values()
    events = RunEventReader(services.redis).read_after(run_id)
    kinds = [e.kind for e in events]
    assert kinds.count(RunEventKind.ERROR) == 1 and kinds.count(RunEventKind.RUN_FINISHED) == 1
    ended = kinds.index(RunEventKind.RUN_FINISHED)
    assert kinds[ended - 1] is RunEventKind.ERROR, kinds
    # The worker may still report the step it was taking when the run was marked; nothing
    # of the flow itself (a plan, a report, another sub-task) comes after the end.
    worker_own = {RunEventKind.STEP, RunEventKind.CAPTURE_SAVED, RunEventKind.SUBTASK_FINISHED,
                  RunEventKind.PREVIEW}
    assert set(kinds[ended + 1:]) <= worker_own, kinds[ended + 1:]
    wait_for_idle_phones(services)  # the phones go back to the farm


def test_a_dead_device_worker_is_restarted_by_the_farm_itself(local_stack: LocalStack,
                                                              services: FlowServices) -> None:
    """The farm's monitor starts a dead worker again by itself (`up` is not needed), records the
    new process in the farm manifest, and `up` afterwards finds everything healthy."""
    wait_for_idle_phones(services)
    serial = services.registry.serials()[0]
    name = worker_process_name(serial)
    dead_pid = local_stack.worker_pid(serial)
    local_stack.kill_worker(serial)

    def restarted() -> bool:
        manifest = read_manifest(local_stack.state_dir)
        record = next(p for p in manifest.processes if p.name == name) if manifest else None
        return record is not None and record.pid != dead_pid and is_running(record)

    wait_until(restarted, 90, "the farm monitor to start the dead worker again")
    wait_until(lambda: services.registry.status(serial).heartbeat_alive, 90,
               "the restarted worker to beat")
    checked = run_cli("up")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "2/2 workers healthy" in checked.stdout, checked.stdout
    assert f"restarted {name}" not in checked.stdout, checked.stdout

    # Both phones take sub-tasks again: the two apps run side by side, one on each.
    before = {s.info.serial: s.tasks_done for s in services.registry.statuses()}
    outcome = run_retrieve(RetrieveRequest(text=QUESTION, run_id=new_id("run")))
    assert_full_report(services, outcome)
    after = {s.info.serial: s.tasks_done for s in services.registry.statuses()}
    assert all(after[s] > before[s] for s in before), (before, after)
    assert services.registry.status(serial).state is DeviceState.IDLE
