"""The ``build-maps`` flow: explore the farm's apps and keep their maps (docs/maps.md).

    build_maps(apps=["Settings", "Zhihu"])      # or every app the farm's live phones have

One Prefect task per app sends ``mapping.build`` to a phone that has it (the
``app.<package>`` queue, as a sub-task would) and waits; apps are built side by
side, as many at once as there are free phones. An app whose map for its
installed version is already complete costs one look at the store; a build that
stopped (a lost phone, a killed worker) goes on from its stored map, so the
flow is resumable by running it again. ``droidretriever up`` serves it as the
``maps-refresh`` deployment, every ``maps.refresh_hours``, so a new app or a new
version is mapped while phones are idle (a build is one more device task in the
phone's queue: a question's sub-task waits at most for the one in flight).

Progress: each phone publishes ``map <label>: N screens, M to explore, ...`` on
the flow's run id (``droidretriever map build`` shows it as a bar per app), and
the flow logs each app's result for the Prefect UI.
"""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.deployments.runner import RunnerDeployment

from core.config import load_settings
from core.errors import InputError
from core.models import InstalledApp, RunEventKind, new_id
from flows.runtime import open_services
from tasks.mapping.task import BUILD_MAP, MapBuildRequest, MapBuildResult, budget_from

__all__ = ["MAPS_DEPLOYMENT", "build_app_map", "build_maps", "choose_apps", "maps_deployment"]

MAPS_DEPLOYMENT = "maps-refresh"
_WAIT_MARGIN_S = 600.0  # beyond an app's time budget: the queue ahead of it, the launch, saving


def choose_apps(installed: tuple[InstalledApp, ...], names: list[str] | None) -> list[InstalledApp]:
    """The installed apps ``names`` (labels or packages, any case) name; all of them when None."""
    if not names:
        return sorted(installed, key=lambda a: a.label.casefold())
    chosen: list[InstalledApp] = []
    unknown: list[str] = []
    for name in names:
        wanted = name.strip().casefold()
        app = next((a for a in installed if wanted in (a.label.casefold(), a.package.casefold())), None)
        if app is None:
            unknown.append(name)
        elif app not in chosen:
            chosen.append(app)
    if unknown:
        known = ", ".join(sorted(a.label for a in installed)[:12])
        raise InputError(f"no phone of the farm has {', '.join(repr(u) for u in unknown)}",
                         hint=f"name an installed app ({known}{', ...' if len(installed) > 12 else ''})")
    return chosen


@task(name="build-app-map", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5)
def build_app_map(run_id: str, package: str, label: str, rebuild: bool = False) -> MapBuildResult:
    """Build one app's map on a phone that has it; its summary."""
    services = open_services(load_settings())
    budget = budget_from(services.settings)
    request = MapBuildRequest(run_id=run_id, package=package, label=label, rebuild=rebuild, budget=budget)
    pending = services.farm.send_to_app(BUILD_MAP, package, request, MapBuildResult)
    result = pending.get(timeout=budget.seconds + _WAIT_MARGIN_S)
    get_run_logger().info("%s: %d screens (%d walls), %d actions, %.0f s on %s: %s", label, result.screens,
                          result.walls, result.actions, result.seconds, result.device, result.stopped)
    return result


@flow(name="build-maps", log_prints=False)
def build_maps(apps: list[str] | None = None, rebuild: bool = False,
               run_id: str | None = None) -> list[MapBuildResult]:
    """Build the maps of ``apps`` (labels or packages; default every app on the farm's live phones)."""
    services = open_services(load_settings())
    run_id = run_id or new_id("maps")
    chosen = choose_apps(services.registry.installed_apps(), apps)
    services.publish(run_id, RunEventKind.LOG,
                     message=f"mapping {len(chosen)} app(s): {', '.join(a.label for a in chosen)}")
    futures = [build_app_map.submit(run_id, app.package, app.label, rebuild) for app in chosen]
    results = [future.result() for future in futures]
    services.publish(run_id, RunEventKind.LOG, message=f"maps done: {len(results)} app(s)")
    return results


def maps_deployment(refresh_hours: float) -> RunnerDeployment:
    """``up``'s deployment of :func:`build_maps` every ``refresh_hours``: new apps and versions."""
    return cast(RunnerDeployment, build_maps.to_deployment(
        name=MAPS_DEPLOYMENT, interval=timedelta(hours=refresh_hours), tags=["maps"],
        description="explore the farm's apps whose map is missing or for another version",
    ))
