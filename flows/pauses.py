"""Resume a run that waits for a person: the CLI's ``droidretriever resume RUN`` and the API's.

A paused app is a Paused Prefect sub-flow tagged ``run:<run_id>``; resuming
sends the :class:`~flows.models.PersonInput` form's answer, exactly as the
Prefect UI's form does.

The process that paused waits in ``pause_flow_run`` and, meanwhile, keeps a
:class:`WaitingBeacon` lit: a Redis key per paused sub-flow with a short TTL
that it renews. A paused sub-flow whose beacon has gone out belongs to a
process that has ended (killed, crashed, machine restarted): resuming it could
only leave a Running state nobody runs, so the run is marked Crashed (Prefect)
and failed (manifest, events), its phones' leases are released (the workers
free them at their next heartbeat), and the caller is told to ask again.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Literal
from uuid import UUID

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
from prefect.states import Crashed

from droidretriever.config import Settings, load_settings
from droidretriever.models import RunEventKind, RunStatus
from flows.errors import FlowError, RunNotPausedError, RunOrphanedError
from flows.keys import waiting_key
from flows.models import PersonInput
from flows.runtime import FlowServices, open_services

__all__ = ["WaitingBeacon", "list_paused_flow_runs", "resume_run"]

log = logging.getLogger(__name__)


class WaitingBeacon:
    """Says "a process waits here" for one paused sub-flow, for as long as that process lives.

    A key with a TTL, renewed every third of it by a background thread; it goes
    out by itself within one TTL of the process's end.
    """

    def __init__(self, client: redis.Redis[bytes], flow_run_id: UUID | None, run_id: str,
                 ttl_s: float) -> None:
        self._redis, self._run_id = client, run_id
        self._key = waiting_key(flow_run_id) if flow_run_id is not None else None
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, daemon=True, name="waiting-beacon")

    def __enter__(self) -> WaitingBeacon:
        if self._key is not None:  # not inside a flow run: nobody can resume it anyway
            self._light()
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self._key is not None:
            try:
                self._redis.delete(self._key)
            except redis.RedisError as error:
                log.warning("could not put out %s (it expires by itself): %s", self._key, error)

    def _light(self) -> None:
        if self._key is not None:
            self._redis.set(self._key, self._run_id, px=self._ttl_ms)

    def _renew(self) -> None:
        while not self._stop.wait(self._ttl_ms / 3000):
            try:
                self._light()
            except redis.RedisError as error:  # Redis restarting: light it again next time
                log.warning("could not renew %s: %s", self._key, error)


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
        _mark_crashed(run_id, reason, services)
        _release_phones(orphaned, run_id, services)
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


def _mark_crashed(run_id: str, reason: str, services: FlowServices) -> None:
    """Every unfinished Prefect flow run of the run -> Crashed; the manifest -> failed; an event."""
    try:
        with get_client(sync_client=True) as client:
            for flow_run in client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[f"run:{run_id}"]))):
                if flow_run.state is None or not flow_run.state.is_final():
                    client.set_flow_run_state(flow_run.id, Crashed(message=reason), force=True)
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot mark run {run_id} crashed in Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc
    services.update_manifest(run_id, lambda m: m.model_copy(update={"status": RunStatus.FAILED}))
    services.publish(run_id, RunEventKind.ERROR, message=reason)


def _release_phones(flow_runs: list[FlowRun], run_id: str, services: FlowServices) -> None:
    """Let go of the phones the dead process held; their workers free them at the next beat."""
    for flow_run in flow_runs:
        for tag in flow_run.tags:
            if tag.startswith("device:"):
                services.registry.leases.release(tag.removeprefix("device:"), run_id)
