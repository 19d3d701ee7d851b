"""A person's pause shows in Prefect: the app sub-flow of the phone they paused is Paused.

A sub-flow that waits for a person itself (``pause_flow_run``) is Paused by Prefect. A
person who pauses or takes over a phone whose copilot is running stops the copilot inside
the phone's worker, which Prefect does not see: :func:`mirror_phone_pause` sets that phone's
app sub-flow Paused (and Running again when they give it back), from a thread, so the
person's command never waits on Prefect. The sub-flow, once its sub-task is back from the
phone, makes sure it is Running again (:func:`run_on_if_paused`) before it goes on, since
Prefect lets no task of a Paused flow start.

Which sub-flow: the run's ``app`` flow runs that are Running or Paused; of several, the one
tagged with the phone (``device:<serial>``), else the one of the app the phone's worker is
working for (its in-flight task's queue, ``app.<package>``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

import httpx
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    FlowFilter,
    FlowFilterName,
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import FlowRun, State, StateType
from prefect.exceptions import PrefectException
from prefect.settings import PREFECT_API_URL, PREFECT_CLIENT_MAX_RETRIES, temporary_settings
from prefect.states import Paused, Running

from device_farm.registry import DeviceRegistry
from storage import ManifestStore, StorageError

__all__ = ["mirror_phone_pause", "run_on_if_paused"]

log = logging.getLogger(__name__)

_TIMEOUT_S = 10.0
_APP_QUEUE = "app."


def mirror_phone_pause(registry: DeviceRegistry, manifests: ManifestStore, run_id: str,
                       serial: str, *, paused: bool, why: str) -> threading.Thread | None:
    """Set the app sub-flow running on ``serial`` Paused (or Running again), in a thread.

    Nothing when this process has no Prefect server named (never a temporary one).
    """
    if not PREFECT_API_URL.value():
        return None
    thread = threading.Thread(target=_mirror, args=(registry, manifests, run_id, serial, paused,
                                                    why), daemon=True, name=f"prefect-{serial}")
    thread.start()
    return thread


def run_on_if_paused(flow_run_id: UUID | None) -> None:
    """Set this flow run Running again if a person's pause left it Paused (logged, never raised)."""
    if flow_run_id is None:
        return
    try:
        with _client() as client:
            flow_run = client.read_flow_run(flow_run_id)
            if flow_run.state is not None and flow_run.state.type is StateType.PAUSED:
                client.set_flow_run_state(flow_run_id, Running(), force=True)
    except (httpx.HTTPError, PrefectException) as exc:
        log.warning("could not set flow run %s running again: %s", flow_run_id, exc)


def _mirror(registry: DeviceRegistry, manifests: ManifestStore, run_id: str, serial: str,
            paused: bool, why: str) -> None:
    try:
        with _client() as client:
            flow_run = _app_flow_run(client, registry, manifests, run_id, serial)
            if flow_run is None:
                log.info("no app sub-flow of run %s found for %s: Prefect not told", run_id, serial)
                return
            state: State[None] = Paused(message=why) if paused else Running(message=why)
            client.set_flow_run_state(flow_run.id, state, force=True)
    except (httpx.HTTPError, PrefectException) as exc:
        log.warning("could not show the pause of %s (run %s) in Prefect: %s", serial, run_id, exc)


@contextmanager
def _client() -> Iterator[SyncPrefectClient]:
    # One try, a short wait: nothing waits long on a Prefect that does not answer.
    with temporary_settings({PREFECT_CLIENT_MAX_RETRIES: 0}), \
            get_client(sync_client=True,
                       httpx_settings={"timeout": httpx.Timeout(_TIMEOUT_S)}) as client:
        yield client


def _app_flow_run(client: SyncPrefectClient, registry: DeviceRegistry, manifests: ManifestStore,
                  run_id: str, serial: str) -> FlowRun | None:
    runs = client.read_flow_runs(
        flow_filter=FlowFilter(name=FlowFilterName(any_=["app"])),
        flow_run_filter=FlowRunFilter(
            tags=FlowRunFilterTags(all_=[f"run:{run_id}"]),
            state=FlowRunFilterState(type=FlowRunFilterStateType(
                any_=[StateType.RUNNING, StateType.PAUSED]))))
    if len(runs) <= 1:
        return runs[0] if runs else None
    tagged = [r for r in runs if f"device:{serial}" in r.tags]
    if len(tagged) == 1:
        return tagged[0]
    label = _app_of_phone(registry, manifests, run_id, serial)
    named = [r for r in runs if label and f"app:{label}" in r.tags]
    return named[0] if len(named) == 1 else None


def _app_of_phone(registry: DeviceRegistry, manifests: ManifestStore, run_id: str,
                  serial: str) -> str:
    """The label of the app whose sub-task the phone's worker runs now ("" when not known)."""
    status = next((s for s in registry.statuses() if s.info.serial == serial), None)
    if status is None or status.inflight is None or not status.inflight.queue.startswith(_APP_QUEUE):
        return ""
    package = status.inflight.queue.removeprefix(_APP_QUEUE)
    try:
        plan = manifests.read(run_id).plan
    except StorageError:
        return ""
    return next((s.app_label for s in plan.subtasks if s.package == package), "") if plan else ""
