"""The farm's phones: their states, a screen, the live view, and a person's remote input.

``POST /devices/{serial}/input`` reaches the phone through the same
``device_farm`` driver the workers use, and only while that phone is taken over
by this caller (:meth:`flows.steering.Steering.check_input`); anything else is
409 with the reason. Each input is counted for the live view, and the screen it
leads to is kept as an intervention step of the sub-task (after a short settle,
off the request). Typed text is never logged nor kept.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, WebSocket, WebSocketDisconnect
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from core.models import InstalledApp
from device_farm.errors import DeviceError
from device_farm.health import down_reason
from droidretriever.api.auth import Caller, authenticate_websocket, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import ApiError, ErrorBody, NotFound
from droidretriever.api.images import thumbnail_jpeg
from droidretriever.api.schemas import SERIAL, DeviceView, InputReply
from flows.keys import takeover_key
from tasks.takeover import RemoteInput, apply_remote_input

__all__ = ["router"]

router = APIRouter(tags=["devices"])

Serial = Annotated[str, Path(pattern=SERIAL, description="the phone's serial, e.g. sim-1")]
_SETTLE_S = 0.3  # the screen kept for an intervention step is taken this long after the input


def _known(context: ApiContext, serial: str) -> None:
    if not context.registry.is_registered(serial):
        raise NotFound(f"no phone {serial} in the farm", hint="GET /devices lists them")


@router.get("/devices", response_model=list[DeviceView],
            summary="Every phone: state (idle, leased by a run, waiting for a person, quarantined), "
                    "the app in front")
def list_devices(context: ApiContext = Depends(get_context),
                 who: Caller = Depends(caller)) -> list[DeviceView]:
    views = []
    for status in context.registry.statuses():
        serial = status.info.serial
        down = down_reason(status)
        package = context.live.current_app(serial)[0] if down is None else ""
        labels = {a.package: a.label for a in status.info.apps}
        holder = context.redis.get(takeover_key(serial))
        views.append(DeviceView(
            serial=serial, model=status.info.model, width=status.info.width,
            height=status.info.height, state=status.state, reason=down or status.reason,
            lease_run=status.lease_run, current_package=package,
            current_app=labels.get(package, ""), apps=len(status.info.apps),
            takeover_run=holder.decode() if holder else None,
            heartbeat_alive=status.heartbeat_alive))
    return views


@router.get("/apps", response_model=list[InstalledApp],
            summary="The apps on the farm's live phones (what a question can be asked of)")
def list_apps(context: ApiContext = Depends(get_context),
              who: Caller = Depends(caller)) -> list[InstalledApp]:
    return sorted(context.registry.installed_apps(), key=lambda a: a.label.casefold())


@router.get("/devices/{serial}/screen", response_class=Response,
            responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}},
            summary="The phone's screen now (PNG), or a thumbnail of it (JPEG, ?width=)")
def get_screen(serial: Serial, width: Annotated[int | None, Query(ge=40, le=1080)] = None,
               context: ApiContext = Depends(get_context),
               who: Caller = Depends(caller)) -> Response:
    _known(context, serial)
    png = context.live.driver(serial).screenshot_png()
    if width is not None:
        return Response(thumbnail_jpeg(png, width), media_type="image/jpeg",
                        headers={"cache-control": "no-store"})
    return Response(png, media_type="image/png", headers={"cache-control": "no-store"})


@router.post("/devices/{serial}/input", response_model=InputReply,
             responses={409: {"model": ErrorBody, "description": "the phone is not yours to drive now"}},
             summary="Tap, long press, swipe, type, back or home on a phone you took over")
def send_input(serial: Serial, body: RemoteInput, context: ApiContext = Depends(get_context),
               who: Caller = Depends(caller)) -> InputReply:
    _known(context, serial)
    state = context.steering.check_input(serial, who.actor)
    driver = context.live.driver(serial)
    note = apply_remote_input(driver, body)
    count = context.live.note_input(serial)
    subtask_id = state.subtask_id
    if subtask_id is not None:
        # Kept in the order the inputs came, off the request: the answer does not wait for it.
        context.live.later(serial, lambda: _record_step(context, state.run_id, subtask_id,
                                                        serial, body, who.actor))
    return InputReply(serial=serial, did=body.describe(), note=note, inputs=count)


def _record_step(context: ApiContext, run_id: str, subtask_id: str, serial: str,
                 remote: RemoteInput, actor: str) -> None:
    time.sleep(_SETTLE_S)
    try:
        png = context.live.driver(serial).screenshot_png()
    except DeviceError:
        return  # the phone went away: the input itself was answered already
    context.recorder.record(run_id, subtask_id, remote, png, actor)


@router.websocket("/devices/{serial}/live")
async def live_screen(websocket: WebSocket, serial: str,
                      fps: Annotated[float | None, Query(gt=0, le=60)] = None) -> None:
    """The phone's live view: a JSON header (seq, inputs, width, height, taken_at) then a JPEG;
    ``fps``: at most this many frames a second (the Farm page's cards ask for a few)."""
    context: ApiContext = websocket.app.state.context
    try:
        authenticate_websocket(websocket, context)
    except ApiError as exc:
        await websocket.close(code=4401 if exc.status == 401 else 4403, reason=str(exc)[:120])
        return
    if not re.match(SERIAL, serial) or not await run_in_threadpool(
            context.registry.is_registered, serial):
        await websocket.close(code=4404, reason=f"no phone {serial[:40]}")
        return
    await websocket.accept()
    loop = asyncio.get_running_loop()
    watcher = await run_in_threadpool(context.live.watch, serial, loop, fps)
    try:
        while True:
            frame = await watcher.queue.get()
            await websocket.send_text(json.dumps({
                "seq": frame.seq, "inputs": frame.inputs, "width": frame.width,
                "height": frame.height, "taken_at": frame.taken_at}))
            await websocket.send_bytes(frame.jpeg)
            if watcher.interval_s:
                await asyncio.sleep(watcher.interval_s)  # meanwhile the newest frame waits
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        context.live.unwatch(serial, watcher)
