"""Every run can be stopped: SIGTERM or Ctrl-C to an `ask` waiting for a person ends it at once.

`droidretriever ask` runs as a person runs it (a subprocess against the test services and
phones); Gmail is logged out on the virtual phones, so the real copilot meets the login wall
and the run pauses, its phone leased. The signal must end the process within seconds, with
the run ``stopped`` in its manifest (sealed: nothing turns it back to running, not the crash
sweep of `status` and `up` either), its pause withdrawn and its phone free.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from prefect.client.schemas.objects import StateType
from prefect.settings import PREFECT_API_URL

from core.models import Query, RunEventKind, RunManifest, RunStatus, new_id
from device_farm.models import DeviceState
from flows.crashes import sweep_crashed_runs
from flows.keys import waiting_key
from flows.pause_queue import PauseEntry, PauseQueue
from flows.pauses import list_paused_flow_runs
from flows.runtime import FlowServices, open_services
from storage import RunEventReader, StaleWriterError
from tests.flows.conftest import FlowFarm
from tests.support.farm import wait_until

CLI = str(Path(sys.executable).parent / "droidretriever")
GMAIL = "com.google.android.gm"
QUESTION = "What is my latest email in Gmail?"


def _set_logged_in(flow_farm: FlowFarm, package: str, on: bool) -> None:
    for serial in flow_farm.sim.serials:
        flow_farm.sim.control.set_logged_in(serial, package, on)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_ends_a_waiting_ask_at_once_stopped_with_its_phone_free(
    flow_farm: FlowFarm, signum: signal.Signals,
) -> None:
    services = open_services(flow_farm.settings)
    queue = PauseQueue(services.redis)
    before = {e.run_id for e in queue.list()}
    _set_logged_in(flow_farm, GMAIL, False)
    # PYTHONPATH passes on: the CLI imports the code under test.
    env = {**os.environ, **flow_farm.env, "COLUMNS": "200",
           "DROIDRETRIEVER_PREFECT__API_URL": str(PREFECT_API_URL.value())}
    asker = subprocess.Popen([CLI, "ask", QUESTION], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        def paused() -> PauseEntry | None:
            return next((e for e in queue.list()
                         if e.question == QUESTION and e.run_id not in before), None)

        entry = wait_until(paused, 180, "the Gmail sub-flow to pause")
        run_id, serial = entry.run_id, entry.serial
        assert services.registry.leases.holder(serial) == run_id  # kept while it waits
        assert services.manifests.read(run_id).status is RunStatus.PAUSED

        sent = time.monotonic()
        asker.send_signal(signum)
        out, err = asker.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if asker.poll() is None:
            asker.kill()
        _set_logged_in(flow_farm, GMAIL, True)

    assert asker.returncode == 128 + signum, (out, err)
    assert took < 8, f"ask took {took:.1f} s to end"
    assert f"run {run_id} stopped" in err
    manifest = services.manifests.read(run_id)
    assert manifest.status is RunStatus.STOPPED, manifest
    assert signal.Signals(signum).name in (manifest.error or "")
    assert services.registry.leases.holder(serial) is None
    # The pause is withdrawn: not in the farm's queue, nothing left to resume, Prefect told.
    assert queue.for_run(run_id) == []
    assert not services.redis.exists(waiting_key(entry.flow_run_id))
    assert list_paused_flow_runs(run_id) == []
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"run:{run_id}"])))
    assert runs and {r.state.type for r in runs if r.state is not None} == {StateType.CANCELLED}
    events = RunEventReader(services.redis).read_after(run_id)
    assert events[-1].kind is RunEventKind.RUN_FINISHED and events[-1].message == "stopped"
    # `status` and `up` sweep for crashed runs: a stopped one stays stopped.
    assert run_id not in {c.run_id for c in sweep_crashed_runs(services)}
    assert services.manifests.read(run_id).status is RunStatus.STOPPED
    # The phone goes back to the farm at its worker's next heartbeat.
    wait_until(lambda: services.registry.status(serial).state is DeviceState.IDLE, 30,
               "the phone freed")


def test_a_run_ended_from_another_process_is_never_written_by_its_owner_again(
    flow_farm: FlowFarm,
) -> None:
    """The owner froze (SIGSTOP) while paused; the sweep marked the run crashed; it resumes."""
    owner = FlowServices(flow_farm.settings)  # the `ask` process that owns the run
    sweep = FlowServices(flow_farm.settings)  # `droidretriever status`, another process
    run_id = new_id("run")
    owner.start_manifest(RunManifest(run_id=run_id, query=Query(text="q"),
                                     status=RunStatus.PAUSED))

    sweep.end_run(run_id, RunStatus.CRASHED, "the process running it ended", seal=True)

    with pytest.raises(StaleWriterError):  # the pause timed out: "running again"
        owner.update_manifest(run_id, lambda m: m.model_copy(update={"status": RunStatus.RUNNING}))
    owner.end_run(run_id, RunStatus.FAILED, "late")  # logged, not written
    manifest = owner.manifests.read(run_id)
    assert manifest.status is RunStatus.CRASHED and manifest.error == "the process running it ended"
    sweep.end_run(run_id, RunStatus.STOPPED, "again")  # the run's last word was said
    assert owner.manifests.read(run_id).status is RunStatus.CRASHED
