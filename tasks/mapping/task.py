"""``mapping.build``: explore one app on this worker's phone and store its map (a device task).

Routed to ``app.<package>`` like a sub-task, so it runs on a phone that has the
app, when that phone's worker is free; the phone is leased for the build's
run id meanwhile. Progress goes out on the run's event stream as LOG events
(``map <label>: 12 screens, 3 to explore, ...``), at most one every
:data:`PROGRESS_EVERY_S` seconds and one at the end.
"""

from __future__ import annotations

import time
from functools import lru_cache

from pydantic import Field

from core.config import Settings
from core.models import Frozen, MapBudget, MapProgress, RunEvent, RunEventKind
from inference.perception import Perceiver
from storage import MapStore, RunEventPublisher, open_object_store
from tasks.mapping.builder import MapBuilder
from tasks.worker import BoundDevice, device_task

__all__ = ["BUILD_MAP", "PROGRESS_EVERY_S", "MapBuildRequest", "MapBuildResult", "budget_from", "build_map"]

BUILD_MAP = "mapping.build"
PROGRESS_EVERY_S = 2.0


class MapBuildRequest(Frozen):
    """Build (or resume, or rebuild) the map of one app."""

    run_id: str  # the phone's lease, and the stream progress goes to
    package: str = Field(min_length=1, max_length=200)
    label: str = ""
    rebuild: bool = False
    budget: MapBudget = MapBudget()


class MapBuildResult(Frozen):
    """What the build made."""

    package: str
    label: str
    version: str
    device: str
    screens: int
    walls: int
    actions: int
    seconds: float
    stopped: str
    complete: bool


def budget_from(settings: Settings) -> MapBudget:
    """The per-app budget the settings give (``DROIDRETRIEVER_MAPS__*``)."""
    maps = settings.maps
    return MapBudget(screens=maps.screens, actions=maps.actions, seconds=maps.minutes * 60.0,
                     list_samples=maps.list_samples)


@lru_cache(maxsize=1)
def _perceiver(settings: Settings) -> Perceiver:
    return Perceiver(settings.perception)


@device_task(BUILD_MAP, MapBuildRequest)
def build_map(device: BoundDevice, request: MapBuildRequest) -> MapBuildResult:
    """Explore ``request.package`` on this worker's phone; the stored map's summary."""
    settings = device.settings
    store = open_object_store(settings)
    events = RunEventPublisher(device.registry.client, store)
    label = request.label or request.package
    last = 0.0

    def report(progress: MapProgress) -> None:
        nonlocal last
        now = time.monotonic()
        if not progress.done and now - last < PROGRESS_EVERY_S:
            return
        last = now
        state = f"done ({progress.message})" if progress.done else f"{progress.frontier} to explore"
        events.publish(RunEvent(
            run_id=request.run_id, kind=RunEventKind.LOG,
            message=f"map {label}: {progress.screens} screens, {state}, {progress.actions} actions, "
                    f"{progress.seconds:.0f} s",
        ))

    try:
        builder = MapBuilder(device.driver, _perceiver(settings), MapStore(store),
                             budget=request.budget, progress=report)
        app_map = builder.build(request.package, label=request.label, rebuild=request.rebuild)
    finally:
        events.close()
    return MapBuildResult(
        package=app_map.package, label=app_map.label, version=app_map.version, device=device.serial,
        screens=len(app_map.screens), walls=len(app_map.walls), actions=app_map.stats.actions,
        seconds=app_map.stats.seconds, stopped=app_map.stats.stopped, complete=app_map.complete,
    )
