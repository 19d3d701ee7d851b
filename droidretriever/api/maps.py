"""App maps: what exploring each app found, for the dashboard's Maps page and the run page's map panel.

    GET /maps                                   a summary per stored map (app, version, screens, walls)
    GET /maps/{package}?version=                the latest map of an app (or that version's), whole
    GET /maps/{package}/screens/{id}?version=   a map screen's screenshot (PNG; ``?width=`` a JPEG thumbnail)

Maps are read through :class:`storage.MapStore`; a screen's screenshot is
served only from under its own map's folder, whatever the map's JSON says.
Everything a map holds is an app's screen text: the dashboard shows it as
text, never as markup.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import Response

from core.models import AppMap
from droidretriever.api.auth import Caller, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import ErrorBody, NotFound
from droidretriever.api.images import thumbnail_jpeg
from droidretriever.api.schemas import MAP_SCREEN_ID, MAP_VERSION, PACKAGE, MapSummary
from storage import ObjectNotFoundError, map_key
from storage.keys import validate_key

__all__ = ["router"]

router = APIRouter(tags=["maps"])

Package = Annotated[str, Path(pattern=PACKAGE, max_length=200, description="the app's package, e.g. com.example.shop")]
Version = Annotated[str | None, Query(pattern=MAP_VERSION, description="a version the map was built "
                                      "for; default: the latest map")]
_MAX_AGE = "private, max-age=60"
_BUILD_HINT = "`droidretriever map build APP` explores the app on the farm and stores its map"
_404: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "no such map or screen"}}


def _load(context: ApiContext, package: str, version: str | None) -> AppMap:
    """The map asked for, or 404 saying what to do."""
    store = context.maps
    if version is None:
        found = store.latest(package)
        if found is None:
            raise NotFound(f"no map of {package} is stored", hint=f"{_BUILD_HINT}; GET /maps lists the maps")
        return found
    try:
        found = store.load(package, version)
    except ValueError as exc:  # a version the store's keys refuse ('.', '..'): no map can have it
        raise NotFound(f"no map of {package} at version {version!r}",
                       hint="GET /maps lists the maps and their versions") from exc
    if found is None:
        raise NotFound(f"no map of {package} at version {version!r} is stored",
                       hint=f"GET /maps lists the versions stored; {_BUILD_HINT}")
    return found


@router.get("/maps", response_model=list[MapSummary],
            summary="Every stored app map: app, version, screens, walls, whether its build finished")
def list_maps(context: ApiContext = Depends(get_context),
              who: Caller = Depends(caller)) -> list[MapSummary]:
    return [MapSummary(package=m.package, label=m.label, version=m.version, screens=len(m.screens),
                       walls=len(m.walls), complete=m.complete, built_at=m.built_at, stopped=m.stats.stopped)
            for m in context.maps.list()]


@router.get("/maps/{package}", response_model=AppMap, responses=_404,
            summary="An app's map: its screens by id, what each element did, the walls")
def get_map(package: Package, version: Version = None, context: ApiContext = Depends(get_context),
            who: Caller = Depends(caller)) -> AppMap:
    return _load(context, package, version)


@router.get("/maps/{package}/screens/{screen_id}", response_class=Response,
            responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}, **_404},
            summary="A map screen's screenshot (PNG), or a thumbnail of it (JPEG, ?width=)")
def get_map_screen(package: Package, screen_id: Annotated[str, Path(pattern=MAP_SCREEN_ID)],
                   version: Version = None,
                   width: Annotated[int | None, Query(ge=40, le=1080)] = None,
                   context: ApiContext = Depends(get_context), who: Caller = Depends(caller)) -> Response:
    app_map = _load(context, package, version)
    screen = app_map.screen(screen_id)
    if screen is None:
        raise NotFound(f"the map of {package} {app_map.version} has no screen {screen_id}",
                       hint=f"GET /maps/{package} lists its screens")
    # Only a key inside this map's own folder: a damaged map cannot point at another object.
    folder = map_key(app_map.package, app_map.version).removesuffix("map.json")
    try:
        key = validate_key(screen.screenshot_key)
    except ValueError:
        key = ""
    if not key.startswith(folder):
        raise NotFound(f"screen {screen_id} of {package} has no screenshot",
                       hint="rebuild the map (`droidretriever map build --rebuild APP`) to take them again")
    try:
        png = context.store.get_bytes(key)
    except ObjectNotFoundError as exc:
        raise NotFound(f"the screenshot of screen {screen_id} of {package} is missing",
                       hint="rebuild the map (`droidretriever map build --rebuild APP`) to take it again") from exc
    if width is None:
        return Response(png, media_type="image/png", headers={"cache-control": _MAX_AGE})
    return Response(thumbnail_jpeg(png, width), media_type="image/jpeg", headers={"cache-control": _MAX_AGE})
