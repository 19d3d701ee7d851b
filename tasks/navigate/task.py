"""``copilot.navigate``: the navigation loop as a device-bound Celery task, routed to ``app.<package>``.

The message is a :class:`tasks.navigate.NavigateRequest` as JSON and the
result a ``SubTaskResult`` as JSON (the farm's ``device_task`` wrapper does
both, leases the phone for the run and quarantines it on device faults). A
sub-task that stops with ``needs_user`` keeps the phone leased for its run, so
the person's takeover and the resume happen on the same phone.

Each time a worker takes a sub-task it is granted a fencing token for it
(:mod:`storage.fences`, scope ``subtask:<run>:<subtask>``); its captures, screens
and trace are written through a store that refuses them once a later holder has
been granted one (the sub-task was run again elsewhere while this worker was frozen).
"""

from __future__ import annotations

from functools import lru_cache

from core.config import Settings
from core.models import SubTaskResult, SubTaskStatus
from inference.llm import Role, client_for
from inference.memory import RouteMemory
from inference.perception import Perceiver
from storage import (
    FencedObjectStore,
    Fences,
    MapStore,
    RunEventPublisher,
    open_object_store,
    subtask_scope,
)
from tasks.control import RedisControlChannel
from tasks.model_clock import RedisModelClock
from tasks.navigate import Copilot, NavigateRequest, ObjectStoreBlobs, navigate_subtask
from tasks.worker import BoundDevice, device_task

__all__ = ["NAVIGATE", "build_copilot", "navigate"]

NAVIGATE = "copilot.navigate"


@lru_cache(maxsize=1)
def _perceiver(settings: Settings) -> Perceiver:
    # One per worker process: the OCR engine loads its models once.
    return Perceiver(settings.perception)


def build_copilot(device: BoundDevice, request: NavigateRequest) -> Copilot:
    """The loop's dependencies for this worker's phone and ``request``'s sub-task.

    The run's records (screens, captures, trace) go through a store fenced with a
    token granted now: this worker is the sub-task's latest holder.
    """
    settings = device.settings
    store = open_object_store(settings)
    client = device.registry.client
    scope = subtask_scope(request.run_id, request.subtask.id)
    fences = Fences(client)
    records = FencedObjectStore(store, fences, scope, fences.grant(scope))
    return Copilot(
        driver=device.driver, perceiver=_perceiver(settings), store=records,
        budgets=settings.budgets, events=RunEventPublisher(client, store),
        control=RedisControlChannel(client), memory=RouteMemory(ObjectStoreBlobs(store)),
        maps=MapStore(store) if settings.maps.use else None,
        navigator=client_for(settings, Role.NAVIGATOR), evaluator=client_for(settings, Role.EVALUATOR),
        evaluator_pages=settings.llm.evaluator_pages, model_clock=RedisModelClock(client, request.run_id),
    )


@device_task(NAVIGATE, NavigateRequest)
def navigate(device: BoundDevice, request: NavigateRequest) -> SubTaskResult:
    """Run the copilot loop for one sub-task on this worker's phone."""
    copilot = build_copilot(device, request)
    try:
        result = navigate_subtask(copilot, request)
    finally:
        if copilot.events is not None and isinstance(copilot.events, RunEventPublisher):
            copilot.events.close()
    if result.status is SubTaskStatus.NEEDS_USER:
        device.hold_for_user()
    return result
