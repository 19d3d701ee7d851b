"""Resume a run that waits for a person: the CLI's ``droidretriever resume RUN`` and the API's.

A paused app is a Paused Prefect sub-flow tagged ``run:<run_id>``; resuming
sends the :class:`~flows.models.PersonInput` form's answer, exactly as the
Prefect UI's form does.

The process that paused waits in ``pause_flow_run`` and, meanwhile, keeps a
:class:`~flows.beacons.Beacon` lit: a Redis key per paused sub-flow
(``flows:waiting:<flow_run_id>``) with a short TTL that it renews. A paused sub-flow whose beacon has gone out belongs to a
process that has ended (killed, crashed, machine restarted): resuming it could
only leave a Running state nobody runs, so the run is marked crashed
(:func:`flows.crashes.mark_run_crashed`: Prefect, manifest, events, and its
phones' leases released) and the caller is told to ask again.
"""

from __future__ import annotations

from typing import Literal

import httpx
import redis
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.exceptions import PrefectException
from prefect.flow_runs import resume_flow_run

from core.config import Settings, load_settings
from flows.crashes import mark_run_crashed
from flows.errors import FlowError, RunNotPausedError, RunOrphanedError
from flows.keys import waiting_key
from flows.models import PersonInput
from flows.runtime import open_services

__all__ = ["list_paused_flow_runs", "resume_run"]


def list_paused_flow_runs(run_id: str) -> list[FlowRun]:
    """The run's sub-flows (one per app) that wait for a person now."""
    try:
        with get_client(sync_client=True) as client:
            return list(client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[f"run:{run_id}"]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
            )))
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot ask Prefect which parts of run {run_id} are paused: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc


def resume_run(run_id: str, action: Literal["continue", "skip"] = "continue",
               note: str = "", app: str | None = None, *,
               settings: Settings | None = None) -> list[str]:
    """Resume the run's paused apps (or only ``app``); returns the names of the resumed sub-flows.

    Raises :class:`RunOrphanedError` (after marking the run crashed) when the
    process that paused has ended.
    """
    settings = settings or load_settings()
    paused = list_paused_flow_runs(run_id)
    if app is not None:
        paused = [r for r in paused if f"app:{app}" in r.tags or r.name.startswith(f"{app} ")]
    if not paused:
        which = f" in {app}" if app else ""
        raise RunNotPausedError(f"nothing of run {run_id}{which} waits for a person",
                                hint="check the run id; `droidretriever ask` prints it")
    services = open_services(settings)
    orphaned = [r for r in paused if not _is_waited_on(services.redis, r)]
    if orphaned:
        names = ", ".join(r.name for r in orphaned)
        reason = f"the process running {run_id} ended while {names} waited for a person"
        mark_run_crashed(services, run_id, reason)
        raise RunOrphanedError(
            f"run {run_id} cannot go on: {reason}",
            hint="ask the question again; the captures taken so far stay in the run's folder "
            f"(runs/{run_id}/ in the object store)",
        )
    answer = PersonInput(action=action, note=note).model_dump(mode="json",
                                                              exclude={"app", "reason", "category"})
    resumed: list[str] = []
    for flow_run in paused:
        try:
            resume_flow_run(flow_run.id, run_input=answer)
        except (httpx.HTTPError, PrefectException, RuntimeError) as exc:
            raise FlowError(f"cannot resume {flow_run.name}: {exc}",
                            hint="the pause may have timed out; start the question again") from exc
        resumed.append(flow_run.name)
    return resumed


def _is_waited_on(client: redis.Redis[bytes], flow_run: FlowRun) -> bool:
    """Whether a process still waits in this paused sub-flow (its beacon is lit)."""
    try:
        return bool(client.exists(waiting_key(flow_run.id)))
    except redis.RedisError as exc:
        raise FlowError(f"cannot tell whether {flow_run.name} is still waited on: {exc}",
                        hint="is Redis up? `droidretriever status`") from exc
