"""Live updates by server-sent events: one run's events, and the farm's pause queue.

``GET /runs/{id}/events`` replays the run's stream after ``Last-Event-ID`` (the
browser sends it when it reconnects; ``?after=`` does the same for a first
connection) and then follows it live; each event's SSE id is its ``seq``, so a
reconnect gets exactly the events it missed. After ``run_finished`` the stream
sends ``event: end`` and closes. A run whose live stream has expired is
replayed from its record in the object store.

``GET /pauses/events`` follows the pause queue: ``opened`` and ``closed``
events, which open dashboards turn into a notification and a sound.

Both read Redis with the asyncio client: a blocked read holds no thread.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from redis import RedisError
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from core.models import RunEvent, RunEventKind
from droidretriever.api.auth import Caller, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import NotFound
from droidretriever.api.schemas import RUN_ID
from flows.pause_queue import PAUSE_EVENTS_KEY, PauseEvent
from storage import ObjectNotFoundError, decode_stream_entry, iter_replay, stream_key

__all__ = ["router"]

log = logging.getLogger(__name__)

router = APIRouter(tags=["events"])

_BLOCK_MS = 15_000  # a read waits this long before the loop looks at the connection again
_BATCH = 500
_SSE: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}}, "description": "server-sent events"}}


def _seq(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is not None and last_event_id.strip().isdigit():
        return int(last_event_id.strip())
    return after or 0


def _message(event: RunEvent) -> ServerSentEvent:
    return ServerSentEvent(data=event.model_dump_json(), id=str(event.seq))


@router.get("/runs/{run_id}/events", response_class=EventSourceResponse, responses=_SSE,
            summary="The run's events: the ones after Last-Event-ID, then live (SSE)")
async def run_events(
    run_id: Annotated[str, Path(pattern=RUN_ID)],
    request: Request,
    after: Annotated[int | None, Query(ge=0, description="replay events after this seq")] = None,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
    context: ApiContext = Depends(get_context),
    who: Caller = Depends(caller),
) -> EventSourceResponse:
    if not await run_in_threadpool(context.manifests.exists, run_id):
        raise NotFound(f"no run {run_id}", hint="GET /runs lists them")
    start = _seq(last_event_id, after)
    return EventSourceResponse(_follow_run(context, request, run_id, start), ping=10,
                               headers={"cache-control": "no-store"})


async def _follow_run(context: ApiContext, request: Request, run_id: str,
                      start: int) -> AsyncIterator[ServerSentEvent]:
    key = stream_key(run_id)
    last = start
    if not await context.aredis.exists(key):
        # The live stream has expired (or the run never published): its record replays it.
        for event in await run_in_threadpool(_replay, context, run_id, start):
            yield _message(event)
            if event.kind is RunEventKind.RUN_FINISHED:
                yield ServerSentEvent(event="end", data="{}")
                return
            last = event.seq
    while not await request.is_disconnected():
        reply = await _read(context, {key: f"0-{last}"}, _BATCH)
        if reply is None:
            return  # Redis hiccup: the browser reconnects with Last-Event-ID and misses nothing
        for _stream, entries in reply:
            for entry_id, fields in entries:
                event = decode_stream_entry(entry_id, fields)
                last = event.seq
                yield _message(event)
                if event.kind is RunEventKind.RUN_FINISHED:
                    yield ServerSentEvent(event="end", data="{}")
                    return


async def _read(context: ApiContext, streams: dict[Any, Any], count: int) -> list[Any] | None:
    """One blocking XREAD; None when Redis failed (logged), [] when nothing came."""
    try:
        reply: Any = await context.aredis.xread(streams, count=count, block=_BLOCK_MS)
    except RedisError as exc:
        log.warning("live stream read failed: %s", type(exc).__name__)
        return None
    return list(reply or [])


def _replay(context: ApiContext, run_id: str, after: int) -> list[RunEvent]:
    try:
        return [e for e in iter_replay(context.store, run_id) if e.seq > after]
    except ObjectNotFoundError:
        return []


@router.get("/pauses/events", response_class=EventSourceResponse, responses=_SSE,
            summary="Pauses opened and closed anywhere on the farm, live (SSE)")
async def pause_events(
    request: Request,
    last_event_id: Annotated[str | None, Header(max_length=40, pattern=r"^[0-9]+-[0-9]+$")] = None,
    context: ApiContext = Depends(get_context),
    who: Caller = Depends(caller),
) -> EventSourceResponse:
    start = last_event_id or await _latest_pause_event(context)
    return EventSourceResponse(_follow_pauses(context, request, start), ping=10,
                               headers={"cache-control": "no-store"})


async def _latest_pause_event(context: ApiContext) -> str:
    latest: Any = await context.aredis.xrevrange(PAUSE_EVENTS_KEY, count=1)
    return latest[0][0].decode() if latest else "0-0"


async def _follow_pauses(context: ApiContext, request: Request,
                         start: str) -> AsyncIterator[ServerSentEvent]:
    last = start
    while not await request.is_disconnected():
        reply = await _read(context, {PAUSE_EVENTS_KEY: last}, 100)
        if reply is None:
            return
        for _stream, entries in reply:
            for entry_id, fields in entries:
                last = entry_id.decode()
                event: PauseEvent | None = PauseEvent.from_stream(entry_id, fields)
                if event is not None:
                    yield ServerSentEvent(data=event.model_dump_json(), id=last, event=event.kind)
