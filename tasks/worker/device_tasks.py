"""Device-bound tasks: plain functions that get the worker's phone, wrapped for Celery.

Write one like this (``tasks/navigate/task.py`` does)::

    @device_task("farm.navigate", NavigateRequest)
    def navigate(device: BoundDevice, request: NavigateRequest) -> SubTaskResult: ...

and add the module to ``DEVICE_TASK_MODULES`` in ``tasks/worker/celery_app.py``.
The wrapper validates the JSON message into the request model, leases the
phone for ``request.run_id`` (when the model has one), runs the function with
the bound device, and returns ``result.model_dump(mode="json")``. A phone that
is lost or fails its health checks is quarantined and the message is put
back for another phone (``Reject(requeue=True)``); any other error fails the
task as usual.

A message can come back although its task ran: a worker that lost its broker
connection mid-task (a Redis restart) cannot acknowledge it any more, so the
broker hands it out again. Such a delivery is dropped, not run twice
(``Ignore``: acknowledged, the stored result kept) when its task already has a
result, or is still running on another phone whose worker beats.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from celery import Celery, Task, states
from celery.exceptions import Ignore, Reject
from pydantic import BaseModel, ValidationError

from device_farm.errors import DeviceBusy, DeviceLost, DeviceQuarantined, DeviceTimeout
from device_farm.models import InflightTask
from inference.perception import release_freed_memory
from tasks.worker.bound_device import BoundDevice, bound_device

__all__ = [
    "DeviceTaskSpec",
    "device_task",
    "find_repeat_delivery",
    "iter_device_tasks",
    "register_device_tasks",
]

log = logging.getLogger(__name__)

RequestT = TypeVar("RequestT", bound=BaseModel)
_DeviceFn = Callable[[BoundDevice, Any], BaseModel]
_HOLDER_POLL_S = 0.25  # how often a repeat delivery looks again for its holder's heartbeat

_SPECS: dict[str, DeviceTaskSpec] = {}


@dataclass(frozen=True)
class DeviceTaskSpec:
    """A device-bound task: its Celery name, request model and function."""

    name: str
    request: type[BaseModel]
    fn: _DeviceFn


def device_task(
    name: str, request: type[RequestT]
) -> Callable[[Callable[[BoundDevice, RequestT], BaseModel]], Callable[[BoundDevice, RequestT], BaseModel]]:
    """Declare a device-bound task; the function stays a plain, directly testable function."""

    def register(fn: Callable[[BoundDevice, RequestT], BaseModel]) -> Callable[[BoundDevice, RequestT], BaseModel]:
        if name in _SPECS and _SPECS[name].fn is not fn:
            raise ValueError(f"two device tasks are named {name!r}")
        _SPECS[name] = DeviceTaskSpec(name=name, request=request, fn=fn)
        return fn

    return register


def iter_device_tasks() -> tuple[DeviceTaskSpec, ...]:
    """Every declared device task, by name."""
    return tuple(_SPECS[name] for name in sorted(_SPECS))


def register_device_tasks(app: Celery) -> None:
    """Register a Celery task on ``app`` for every declared device task."""
    for spec in iter_device_tasks():
        app.task(name=spec.name, bind=True, acks_late=True, reject_on_worker_lost=True)(
            _make_runner(spec)
        )


def _make_runner(spec: DeviceTaskSpec) -> Callable[..., dict[str, Any]]:
    def run(task: Task[Any, Any], payload: dict[str, Any]) -> dict[str, Any]:
        try:
            request = spec.request.model_validate(payload)
        except ValidationError as exc:
            # A malformed message will never succeed: fail it instead of redelivering it.
            raise ValueError(f"{spec.name}: bad request: {exc}") from exc
        try:
            return run_device_task(task, spec, request).model_dump(mode="json")
        finally:
            # A sub-task's screenshots, stitched captures and OCR tensors are freed by now; glibc
            # would keep their pages (a worker grew to 450 MB over Study 2): give them back.
            release_freed_memory()

    run.__name__ = spec.name.rsplit(".", 1)[-1]
    run.__doc__ = spec.fn.__doc__
    return run


def find_repeat_delivery(task: Task[Any, Any], device: BoundDevice) -> str | None:
    """Why this delivery of the task must not run, or None when it should.

    It must not when the task already ended (its result is stored) or when
    another phone whose worker still beats has it in flight.
    """
    task_id = str(task.request.id)
    if task.backend.get_task_meta(task_id).get("status") in states.READY_STATES:
        return "it has already ended"
    registry = device.registry
    # A phone that had it in flight but has not beaten lately may be reconnecting (Redis just
    # restarted, which is when the broker hands messages out again): wait one heartbeat TTL
    # for it to beat before taking the message as abandoned.
    deadline = time.monotonic() + registry.heartbeat_ttl_s
    while True:
        holders = [s for s in registry.statuses() if s.info.serial != device.serial
                   and s.inflight is not None and s.inflight.task_id == task_id]
        alive = next((s for s in holders if s.heartbeat_alive), None)
        if alive is not None:
            return f"it is still running on {alive.info.serial}"
        if not holders or time.monotonic() >= deadline:
            return None
        time.sleep(_HOLDER_POLL_S)


def run_device_task(task: Task[Any, Any], spec: DeviceTaskSpec, request: BaseModel) -> BaseModel:
    """Run ``spec`` on this worker's phone with lease, in-flight record and health handling."""
    device = bound_device()
    delivery = task.request.delivery_info or {}
    inflight = InflightTask(
        task_id=str(task.request.id), task_name=spec.name,
        queue=str(delivery.get("routing_key") or ""), started_at=datetime.now(UTC),
    )
    # Recorded first: a host that dies from here on (a power cut takes the worker before its
    # checks and lease are done) has this message handed on by the farm monitor, which finds
    # a dead worker's message by this record only.
    device.registry.set_inflight(device.serial, inflight)
    repeat = find_repeat_delivery(task, device)
    if repeat is not None:
        device.registry.set_inflight(device.serial, None)
        log.warning("%s[%s] delivered again (%s): not run twice", spec.name, task.request.id, repeat)
        raise Ignore(repeat)
    run_id = getattr(request, "run_id", None)
    if isinstance(run_id, str) and run_id:
        try:
            device.begin_run(run_id)
        except DeviceBusy as exc:
            # Another run holds this phone (paused): hand the sub-task to another phone.
            device.registry.set_inflight(device.serial, None)
            raise Reject(str(exc), requeue=True) from exc
    try:
        result = spec.fn(device, request)
    except (DeviceLost, DeviceTimeout, DeviceQuarantined) as exc:
        device.quarantine(str(exc))
        device.registry.set_inflight(device.serial, None)
        raise Reject(f"{device.serial} quarantined: {exc}", requeue=True) from exc
    except Exception:
        device.registry.set_inflight(device.serial, None)
        device.registry.record_task(device.serial, ok=False)
        device.end_run()
        raise
    device.registry.set_inflight(device.serial, None)
    device.registry.record_task(device.serial, ok=True)
    device.end_run()
    return result
