"""Ending a run from outside its flow: everywhere at once, and for good.

Two callers: the sweep of runs whose process died (:func:`flows.crashes.mark_run_crashed`,
status ``crashed``) and a person's SIGTERM or Ctrl-C to a waiting ``ask``
(:func:`stop_run_now`, status ``stopped``). Either way:

    manifest   sealed (a new fencing token: the flow's own later writes are refused), then the
               status and why; sub-tasks left running -> ``failed``
    events     ``error`` (the reason), then ``run_finished``
    pauses     withdrawn: the farm's queue closes them, their beacons go out (``resume`` says
               that nothing waits), Prefect's sub-flows are told the final state
    phones     a sub-task still on a phone is told to stop (its control channel); the
               leases the run holds are released (workers free them at their next beat)

Prefect goes last: the sweep finds runs by their Prefect state, so a step that
fails here (a service down) is simply done again by the next sweep.
"""

from __future__ import annotations

import contextlib
import logging

import httpx
import redis
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from prefect.exceptions import PrefectException
from prefect.states import Cancelled, Crashed

from core.models import RunStatus
from flows.errors import FlowError
from flows.keys import waiting_key
from flows.pause_queue import PauseQueue
from flows.runtime import FlowServices
from flows.stop import request_stop
from tasks.control import ControlCommand, ControlKind, RedisControlChannel

__all__ = ["end_run_everywhere", "stop_run_now"]

log = logging.getLogger(__name__)


def stop_run_now(services: FlowServices, run_id: str, reason: str) -> None:
    """End ``run_id`` ``stopped`` at once: pauses withdrawn, phones freed, never running again."""
    end_run_everywhere(services, run_id, RunStatus.STOPPED, reason, actor="ask")


def end_run_everywhere(services: FlowServices, run_id: str, status: RunStatus, reason: str, *,
                       actor: str) -> None:
    """Record that ``run_id`` ended ``status`` in its manifest, events, pauses, phones and Prefect.

    ``actor`` names who ended it in the phones' control channel ("crash sweep", "ask").
    Raises :class:`FlowError` when Prefect cannot be told (the rest is done by then).
    """
    services.end_run(run_id, status, reason, seal=True)
    request_stop(services.redis, run_id)  # nothing of the run starts any more
    _withdraw_pauses(services, run_id, status.value)
    channel = RedisControlChannel(services.redis)
    for device in services.registry.statuses():
        if device.lease_run == run_id:
            serial = device.info.serial
            # A sub-task still on the phone stops at its next step instead of running on
            # for a run nobody will report.
            channel.send(run_id, ControlCommand(kind=ControlKind.STOP, serial=serial,
                                                actor=actor, note=reason))
            services.registry.leases.release(serial, run_id)
    final = Cancelled if status is RunStatus.STOPPED else Crashed
    try:
        with get_client(sync_client=True) as client:
            for flow_run in client.read_flow_runs(flow_run_filter=FlowRunFilter(
                    tags=FlowRunFilterTags(all_=[f"run:{run_id}"]))):
                if flow_run.state is None or not flow_run.state.is_final():
                    client.set_flow_run_state(flow_run.id, final(message=reason), force=True)
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot mark run {run_id} {status.value} in Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc


def _withdraw_pauses(services: FlowServices, run_id: str, outcome: str) -> None:
    """The run's pauses leave the farm's queue; their beacons go out so nothing resumes them."""
    queue = PauseQueue(services.redis)
    try:
        for entry in queue.for_run(run_id):
            with contextlib.suppress(redis.RedisError):
                services.redis.delete(waiting_key(entry.flow_run_id))
            queue.close(entry.flow_run_id, outcome)
    except redis.RedisError as exc:  # the queue is a view; the run's end is recorded regardless
        log.warning("could not withdraw the pauses of run %s: %s", run_id, exc)
