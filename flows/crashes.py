"""Runs whose process died: found by their beacon, marked crashed everywhere, phones freed.

The ``retrieve`` flow runs in the process that asked (``droidretriever ask``, the
subscriptions service). If that process is killed, nothing is left to finish
the run or to say it ended, so it would stay Running in Prefect and ``running``
in its manifest for ever. While it runs, the process keeps a beacon lit
(``flows:alive:<run_id>``, see :mod:`flows.beacons`). :func:`sweep_crashed_runs`
looks at every ``retrieve`` flow run Prefect has as Running or Paused and, when
its beacon has gone out, calls :func:`mark_run_crashed`:

    Prefect    every unfinished flow run tagged ``run:<run_id>``  -> Crashed (the reason)
    manifest   sealed (the dead process, were it only frozen, can never write it again),
               status ``crashed``, the reason, sub-tasks left running -> ``failed``
    events     ``error`` (the reason), then ``run_finished``
    pauses     withdrawn from the farm's queue
    phones     a sub-task still on a phone is told to stop (its control channel); the
               leases the run holds are released (workers free them at their next beat)

The sweep runs in ``droidretriever status``, ``up`` and ``ask``, and every few
seconds in the subscriptions service, so a killed ``ask`` is found within about
one beacon TTL plus that interval while the stack runs. ``resume`` finds a paused
run whose process died the same way (its sub-flow's own beacon, flows.pauses).

A beacon may be out for a moment after a Redis restart (until its process lights
it again), and a run that has just started may not have lit it yet: the sweep
trusts an absence only when Redis and the flow run are both older than one TTL.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta

import httpx
import redis
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowFilter,
    FlowFilterName,
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.exceptions import PrefectException

from core.errors import DroidRetrieverError
from core.models import RunStatus, utcnow
from flows.beacons import redis_uptime_s
from flows.ending import end_run_everywhere
from flows.errors import FlowError
from flows.keys import alive_key, crash_claim_key
from flows.models import CrashedRun
from flows.runtime import FlowServices
from storage import StorageError

__all__ = ["mark_run_crashed", "sweep_crashed_runs"]

log = logging.getLogger(__name__)

_RETRIEVE_FLOW = "retrieve"
_ENDED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.STOPPED, RunStatus.CRASHED})
_CLAIM_TTL_S = 60  # long enough to mark a run; a sweep that died meanwhile is redone after it


def mark_run_crashed(services: FlowServices, run_id: str, reason: str) -> None:
    """Mark ``run_id`` crashed in its manifest (sealed), events, pauses, phones and Prefect.

    See :func:`flows.ending.end_run_everywhere`; Prefect goes last, so a step that
    fails here (a service down) is simply done again by the next sweep.
    """
    end_run_everywhere(services, run_id, RunStatus.CRASHED, reason, actor="crash sweep")


def sweep_crashed_runs(services: FlowServices) -> list[CrashedRun]:
    """Mark crashed every running ``retrieve`` run whose process has ended; what was found.

    Raises FlowError when Prefect cannot be asked; a run that cannot be marked
    now (a service down) is left for the next sweep.
    """
    ttl_s = services.settings.farm.lease_ttl_s
    try:
        if redis_uptime_s(services.redis) < ttl_s:
            return []  # Redis restarted moments ago: live beacons are being lit again
    except redis.RedisError as exc:
        raise FlowError(f"cannot read the runs' beacons: {exc}",
                        hint="is Redis up? `droidretriever status`") from exc
    crashed: list[CrashedRun] = []
    for flow_run in _running_retrieve_runs():
        run_id = next((t.removeprefix("run:") for t in flow_run.tags if t.startswith("run:")), None)
        started = flow_run.start_time or flow_run.created
        if run_id is None or started is None or utcnow() - started < timedelta(seconds=ttl_s):
            continue  # not one of ours, or too young to have lit its beacon for sure
        try:
            if services.redis.exists(alive_key(run_id)) or _has_ended(services, run_id):
                continue
            # `status` and the subscriptions service may sweep at once: one of them marks it.
            if not services.redis.set(crash_claim_key(run_id), "1", nx=True, ex=_CLAIM_TTL_S):
                continue
        except redis.RedisError as exc:
            raise FlowError(f"cannot read the beacon of run {run_id}: {exc}",
                            hint="is Redis up? `droidretriever status`") from exc
        found = CrashedRun(run_id=run_id, reason="the process running it ended before the "
                                                 "run finished (killed, or its machine restarted)")
        try:
            mark_run_crashed(services, run_id, found.reason)
        except (DroidRetrieverError, redis.RedisError) as exc:
            log.warning("could not mark run %s crashed yet: %s", run_id, exc)
            with contextlib.suppress(redis.RedisError):  # the next sweep tries again
                services.redis.delete(crash_claim_key(run_id))
            continue
        log.info("%s", found.describe())
        crashed.append(found)
    return crashed


def _has_ended(services: FlowServices, run_id: str) -> bool:
    """Whether the run's manifest already says how it ended.

    Its process puts the beacon out just before Prefect hears the flow's final state:
    a sweep in that moment sees Running with no beacon. The manifest, written first,
    tells a run that finished from one whose process died.
    """
    try:
        status = services.manifests.read(run_id).status
    except StorageError:
        return False  # no manifest to say so: judged by the beacon alone
    return status in _ENDED


def _running_retrieve_runs() -> list[FlowRun]:
    try:
        with get_client(sync_client=True) as client:
            return list(client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=[_RETRIEVE_FLOW])),
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                    type=FlowRunFilterStateType(any_=[StateType.RUNNING, StateType.PAUSED]))),
            ))
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot ask Prefect which runs are running: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc
