"""The per-app sub-flow: one app's sub-tasks in order, on one phone, pausing for a person.

    run_app(run_id, app, sub-tasks)
      for each sub-task:  navigate (Prefect task -> Celery -> SubTaskResult)
        needs_user ->  pause_flow_run(wait_for_input=PersonInput)  (phone stays leased)
                       continue -> navigate again on the same phone (what the person did,
                                   a login or a consent, stays on it)
                       skip / timeout -> the sub-task ends needs_user; the report names the app
                       the phone went down -> the pause ends; navigate again on any phone with
                                   the app (flows.phone_loss)
      the first sub-task goes to any phone with the app; the rest follow it to that phone
      (to any phone with the app again if that one is down).

Sub-task statuses go to the run manifest as they change. The device task
publishes its own sub-task, step and capture events; this flow adds the
pauses, resumes, and the failures it produces itself (a phone that never
answered).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx
import redis
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import State
from prefect.exceptions import FlowPauseTimeout, PrefectException
from prefect.flow_runs import pause_flow_run
from prefect.states import Running

from core.config import load_settings
from core.models import (
    RunEventKind,
    RunManifest,
    RunStatus,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    Trace,
)
from device_farm.errors import DeviceError
from device_farm.health import find_down_phones
from flows.beacons import Beacon
from flows.dispatch import LeaseKeeper, navigate_subtask
from flows.errors import AttemptFailedError
from flows.keys import waiting_key
from flows.models import AppOutcome, PersonInput
from flows.pause_queue import PauseEntry, PauseNotice, PauseQueue, post_pause_webhook
from flows.phone_loss import MoveWatch, PhoneLost, PhoneWatch, announce_loss
from flows.prefect_states import run_on_if_paused
from flows.runtime import FlowServices, open_services
from flows.stop import final_state, is_stop_requested
from flows.ui import add_flow_run_tags, artifact_key, current_flow_run_id
from storage import StorageError

__all__ = ["run_app"]

log = logging.getLogger(__name__)

_PAUSE_POLL_S = 1


@flow(name="app", flow_run_name="{app_label} · {run_id}", validate_parameters=True)
def run_app(run_id: str, app_label: str, package: str, subtasks: list[SubTask],
            navigate_task: str, device: str | None = None) -> State[AppOutcome]:
    """Run one app's sub-tasks in order on one phone; pause for a person when one needs it.

    Ends Cancelled in Prefect when a person stopped the run, Failed when a sub-task failed
    (a phone that died, a page not found), else Completed: each carries the app's outcome.

    ``device``: the phone to use (a benchmark pins a run to the phone it prepared);
    None: any free phone with the app, then the same one for the app's later sub-tasks.
    """
    services = open_services(load_settings())
    flow_run_id = current_flow_run_id()
    add_flow_run_tags(flow_run_id, [f"run:{run_id}", f"app:{app_label}"])
    results: list[SubTaskResult] = []
    keeper: LeaseKeeper | None = None
    for subtask in subtasks:
        if is_stop_requested(services.redis, run_id):
            log.info("run %s was asked to stop: %s not started", run_id, subtask.id)
            break
        if keeper is not None:
            keeper.stop()  # the lease stays; the phone's worker takes it over
        _record_status(services, run_id, subtask, SubTaskStatus.RUNNING)
        result = _run_with_pauses(services, run_id, app_label, subtask, navigate_task, device)
        results.append(result)
        _record_result(services, run_id, subtask, result)
        if result.device is not None and result.device != device:
            device = result.device
            add_flow_run_tags(flow_run_id, [f"device:{device}"])
        if device is not None and result.status is not SubTaskStatus.NEEDS_USER:
            # Keep the phone for this app's next sub-task (its worker let go of it).
            keeper = LeaseKeeper(services.registry.leases, device, run_id,
                                 services.settings.farm.lease_ttl_s)
            if not keeper.start():
                device = None  # another run took it: the next sub-task goes to any phone
    if keeper is not None:
        keeper.stop()
        if device is not None:
            services.registry.leases.release(device, run_id)
    outcome = AppOutcome(package=package, app_label=app_label, device=device,
                         results=tuple(results))
    failed = "; ".join(f"{r.subtask_id}: {r.reason}" for r in results
                       if r.status in (SubTaskStatus.FAILED, SubTaskStatus.BUDGET_EXHAUSTED))
    # Its loop broke for a stop before a sub-task, or a person stopped one on its phone.
    stopped = len(results) < len(subtasks) or any(r.status is SubTaskStatus.STOPPED
                                                   for r in results)
    return final_state(outcome, stopped=stopped, failed=failed)


def _run_with_pauses(services: FlowServices, run_id: str, app_label: str, subtask: SubTask,
                     navigate_task: str, device: str | None) -> SubTaskResult:
    """Navigate; on ``needs_user`` wait for a person, then navigate again on the same phone.

    A phone that is down (before the sub-task, or while it waits for a person) is let go: the
    sub-task goes to any phone with the app, and the run is told which.
    """
    down = find_down_phones(services.redis, [device]).get(device) if device else None
    if device is not None and down is not None:
        announce_loss(services, run_id, subtask, device, down, person=False)
        services.registry.leases.release(device, run_id)
        result = _navigate_elsewhere(services, run_id, subtask, navigate_task, device)
    else:
        result = _navigate(services, run_id, subtask, navigate_task, device)
    run_on_if_paused(current_flow_run_id())  # a person paused its phone meanwhile
    pauses = 0
    while result.status is SubTaskStatus.NEEDS_USER and result.device is not None:
        serial = result.device
        pauses += 1
        answer = _wait_for_person(services, run_id, app_label, subtask, result, pauses)
        if answer is None:
            return result.model_copy(update={"reason": _timeout_reason(result, services)})
        if isinstance(answer, PhoneLost):
            announce_loss(services, run_id, subtask, serial, answer.why, person=True)
            result = _navigate_elsewhere(services, run_id, subtask, navigate_task, serial)
            continue
        if answer.action == "skip":
            services.registry.leases.release(serial, run_id)
            return result.model_copy(update={
                "reason": f"{result.reason}; the person chose to skip it".lstrip("; ")})
        services.publish(run_id, RunEventKind.RESUMED, subtask_id=subtask.id,
                         message=answer.note or "a person finished on the phone")
        _set_run_status(services, run_id, RunStatus.RUNNING)
        result = _navigate(services, run_id, subtask, navigate_task, serial, resumed=pauses)
        run_on_if_paused(current_flow_run_id())
    return result


def _navigate_elsewhere(services: FlowServices, run_id: str, subtask: SubTask, navigate_task: str,
                        lost: str) -> SubTaskResult:
    """The sub-task again from its start, on any phone with the app; the run hears which."""
    _set_run_status(services, run_id, RunStatus.RUNNING)
    with MoveWatch(services, run_id, subtask, lost) as moved:
        result = _navigate(services, run_id, subtask, navigate_task, None)
    if result.device is not None:
        moved.announce(result.device)  # it ended before the watch saw it run
    return result


def _navigate(services: FlowServices, run_id: str, subtask: SubTask, navigate_task: str,
              device: str | None, *, resumed: int = 0) -> SubTaskResult:
    """One sub-task through Prefect (retries with tips) and Celery; failures become results."""
    retries = max(0, services.settings.budgets.retries - 1)
    try:
        return navigate_subtask.with_options(retries=retries)(
            run_id, subtask, navigate_task, device=device, resumed=resumed)
    except AttemptFailedError as exc:
        return exc.result  # every try failed; the last one's reason is the report's
    except DeviceError as exc:
        reason = f"{exc} ({exc.hint})" if exc.hint else str(exc)
        result = SubTaskResult(subtask_id=subtask.id, status=SubTaskStatus.FAILED,
                               trace=Trace(subtask_id=subtask.id), reason=reason, device=device)
        services.publish(run_id, RunEventKind.SUBTASK_FINISHED, subtask_id=subtask.id,
                         result=result, message=f"{subtask.app_label}: failed ({reason})")
        return result


def _wait_for_person(services: FlowServices, run_id: str, app_label: str, subtask: SubTask,
                     result: SubTaskResult, pauses: int) -> PersonInput | PhoneLost | None:
    """Pause this sub-flow until a person resumes it (form in the UI, CLI, API), its phone goes
    down, or the pause times out (None)."""
    category = result.risk_category.value if result.risk_category else "a person's decision"
    why = result.reason or f"the app needs {category}"
    services.publish(run_id, RunEventKind.NEEDS_USER, subtask_id=subtask.id, result=result,
                     message=f"{app_label} needs you on {result.device}: {why}")
    _set_run_status(services, run_id, RunStatus.PAUSED)
    timeout_s = services.settings.budgets.pause_timeout_s
    form = PersonInput.with_initial_data(
        description=(
            f"**{app_label}** on phone `{result.device}` needs a person ({category}): {why}.\n\n"
            f"Sub-task: {subtask.goal}\n\nTake over the phone, then choose *continue* to let the "
            f"copilot go on from the current screen, or *skip* to report without this sub-task. "
            f"Waits {timeout_s:.0f} s."),
        app=app_label, reason=why, category=result.risk_category,
    )
    serial = result.device or ""
    flow_run_id = current_flow_run_id()
    add_flow_run_tags(flow_run_id, [f"device:{serial}"])  # the phone a person should pick up
    ttl_s = services.settings.farm.lease_ttl_s
    entry = PauseEntry(flow_run_id=str(flow_run_id), run_id=run_id, subtask_id=subtask.id,
                       app_label=app_label, package=subtask.package, serial=serial, reason=why,
                       category=result.risk_category, question=_question(services, run_id),
                       timeout_s=timeout_s)
    farm = services.settings.farm
    watch = PhoneWatch(services.redis, serial, flow_run_id, min(1.0, farm.heartbeat_s / 2),
                       confirm_s=farm.heartbeat_s * farm.heartbeat_missed)
    answer: PersonInput | None = None
    # The beacon tells `resume` and the pause queue that this process still waits here.
    with LeaseKeeper(services.registry.leases, serial, run_id, ttl_s), \
            Beacon(services.redis, waiting_key(flow_run_id) if flow_run_id else None, run_id,
                   ttl_s):
        try:
            _announce_pause(services, entry, flow_run_id is not None)
            with watch:
                answer = _pause_here(form, timeout_s, artifact_key(subtask.id, f"pause{pauses}"))
        finally:
            outcome = "phone lost" if watch.lost else answer.action if answer else "timed out"
            if flow_run_id is not None:
                _quietly(lambda: PauseQueue(services.redis).close(entry.flow_run_id, outcome))
        if answer is not None and watch.lost is None:
            return answer
    # Released only once the keeper has stopped renewing it.
    services.registry.leases.release(serial, run_id)
    if watch.lost is not None:
        return PhoneLost(watch.lost)
    _reclaim_running_state()
    _set_run_status(services, run_id, RunStatus.RUNNING)
    return None


def _pause_here(form: type[PersonInput], timeout_s: float, key: str) -> PersonInput | None:
    """Prefect's pause with the form; None when it timed out (or Prefect refused)."""
    try:
        answer: PersonInput = pause_flow_run(wait_for_input=form, timeout=max(1, int(timeout_s)),
                                             poll_interval=_PAUSE_POLL_S, key=key)
    except (FlowPauseTimeout, RuntimeError) as exc:  # timed out, or Prefect refused
        log.warning("pause %s ended without a person: %s", key, exc)
        return None
    return answer


def _question(services: FlowServices, run_id: str) -> str:
    try:
        return services.manifests.read(run_id).query.text
    except StorageError:
        return ""


def _announce_pause(services: FlowServices, entry: PauseEntry, queued: bool) -> None:
    """Put the pause in the farm's queue and call the pause webhook; neither may fail the run."""
    if queued:
        _quietly(lambda: PauseQueue(services.redis).open(entry))
    webhook = services.settings.api.pause_webhook
    if webhook is not None:
        post_pause_webhook(str(webhook), PauseNotice(
            app=entry.app_label, reason=entry.reason, category=entry.category,
            run_id=entry.run_id, question=entry.question, phone=entry.serial,
            dashboard=f"{services.settings.api.base_url}/#/runs/{entry.run_id}",
            since=entry.since))


def _quietly(write: Callable[[], None]) -> None:
    """Queue bookkeeping is for live views: a Redis hiccup is logged, the pause goes on."""
    try:
        write()
    except redis.RedisError as exc:
        log.warning("could not update the pause queue: %s", exc)


def _reclaim_running_state() -> None:
    """After a pause timed out the sub-flow is still Paused in the API: set it running again."""
    flow_run_id = current_flow_run_id()
    if flow_run_id is None:
        return
    try:
        with get_client(sync_client=True) as client:
            client.set_flow_run_state(flow_run_id, Running(), force=True)
    except (httpx.HTTPError, PrefectException) as exc:
        log.warning("could not set flow run %s running again: %s", flow_run_id, exc)


def _timeout_reason(result: SubTaskResult, services: FlowServices) -> str:
    waited = services.settings.budgets.pause_timeout_s
    return (f"{result.reason or 'needs a person'}; nobody took over within {waited:.0f} s")


def _record_status(services: FlowServices, run_id: str, subtask: SubTask,
                   status: SubTaskStatus) -> None:
    def change(manifest: RunManifest) -> RunManifest:
        return manifest.model_copy(update={"subtasks": {**manifest.subtasks, subtask.id: status}})

    services.update_manifest(run_id, change)


def _record_result(services: FlowServices, run_id: str, subtask: SubTask,
                   result: SubTaskResult) -> None:
    """Status and capture ids into the manifest (ids deduplicated: a redelivery overwrites)."""
    def change(manifest: RunManifest) -> RunManifest:
        ids = tuple(dict.fromkeys([*manifest.capture_ids, *(c.id for c in result.captures)]))
        return manifest.model_copy(update={
            "subtasks": {**manifest.subtasks, subtask.id: result.status}, "capture_ids": ids})

    services.update_manifest(run_id, change)


def _set_run_status(services: FlowServices, run_id: str, status: RunStatus) -> None:
    services.update_manifest(run_id, lambda m: m.model_copy(update={"status": status}))
