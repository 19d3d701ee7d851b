"""The farm's pause queue: every sub-flow waiting for a person, whoever started its run.

    run_app -> needs_user -> PauseQueue.open(entry)  (+ the pause webhook, if configured)
                             pause_flow_run(...)      (the Prefect form; the API, CLI and UI resume it)
                          -> PauseQueue.close(...)    (resumed, skipped, or timed out)

An entry lives in one Redis hash (``flows:pauses``, by flow run id) and every
change goes on a stream (``flows:pause-events``) that open dashboards follow to
ring and notify. A process that dies while paused cannot close its entry: an
entry counts only while that process's waiting beacon (:mod:`flows.pauses`) is
lit, and :meth:`PauseQueue.list` drops the others.

The webhook gets the app, the reason, the run and its dashboard link as JSON,
from a background thread: a slow or dead webhook never delays the pause.
"""

from __future__ import annotations

import builtins
import logging
import threading
from datetime import datetime
from typing import Literal, cast

import httpx
import redis
from pydantic import Field, ValidationError

from core.models import Frozen, RiskCategory, utcnow
from device_farm.health import find_down_phones
from flows.keys import PAUSE_EVENTS_KEY, PAUSES_KEY, waiting_key

__all__ = [
    "PAUSE_EVENTS_KEY",
    "PauseEntry",
    "PauseEvent",
    "PauseNotice",
    "PauseQueue",
    "post_pause_webhook",
]

log = logging.getLogger(__name__)

_STREAM_MAXLEN = 1000


class PauseEntry(Frozen):
    """One sub-flow waiting for a person: where, why, since when."""

    flow_run_id: str
    run_id: str
    subtask_id: str
    app_label: str
    package: str
    serial: str
    reason: str
    category: RiskCategory | None = None
    question: str = ""  # the run's question, so a queue of many runs reads by itself
    since: datetime = Field(default_factory=utcnow)
    timeout_s: float = 0.0  # after this the sub-task ends needs_user and the report names the app

    @property
    def waited_s(self) -> float:
        return max(0.0, (utcnow() - self.since).total_seconds())


class PauseEvent(Frozen):
    """A change of the queue, as live views receive it; ``id`` is the stream entry id."""

    id: str = ""
    kind: Literal["opened", "closed"]
    entry: PauseEntry
    outcome: str = ""  # closed: "continue", "skip", "timed out", "gone", "phone lost"

    @classmethod
    def from_stream(cls, entry_id: bytes, fields: dict[bytes, bytes]) -> PauseEvent | None:
        """One entry of ``flows:pause-events`` (None when unreadable: another version wrote it)."""
        try:
            event = cls.model_validate_json(fields[b"event"])
        except (KeyError, ValidationError):
            return None
        return event.model_copy(update={"id": entry_id.decode()})


class PauseNotice(Frozen):
    """What the pause webhook receives."""

    app: str
    reason: str
    category: RiskCategory | None
    run_id: str
    question: str
    phone: str
    dashboard: str  # the run's page in the dashboard, where the phone can be taken over
    since: datetime


class PauseQueue:
    """Open, close and list the pauses waiting for a person, farm-wide."""

    def __init__(self, client: redis.Redis[bytes]) -> None:
        self._redis = client

    def open(self, entry: PauseEntry) -> None:
        """Add ``entry`` to the queue and tell live views."""
        pipe = self._redis.pipeline()
        pipe.hset(PAUSES_KEY, entry.flow_run_id, entry.model_dump_json())
        pipe.xadd(PAUSE_EVENTS_KEY, {"event": _event_json("opened", entry)},
                  maxlen=_STREAM_MAXLEN, approximate=True)
        pipe.execute()

    def close(self, flow_run_id: str, outcome: str) -> None:
        """Take the pause out of the queue (answered, skipped, timed out) and tell live views."""
        raw = self._redis.hget(PAUSES_KEY, flow_run_id)
        entry = _decode_entry(raw)
        pipe = self._redis.pipeline()
        pipe.hdel(PAUSES_KEY, flow_run_id)
        if entry is not None:
            pipe.xadd(PAUSE_EVENTS_KEY, {"event": _event_json("closed", entry, outcome)},
                      maxlen=_STREAM_MAXLEN, approximate=True)
        pipe.execute()

    def list(self) -> builtins.list[PauseEntry]:
        """Every pause a live process still waits in on a phone that is up, oldest first.

        Entries of dead processes are closed (``gone``); those whose phone is down are left
        out, and their sub-flow closes them (``phone lost``) once it has seen it.
        """
        raw = self._redis.hgetall(PAUSES_KEY)
        entries = [e for e in (_decode_entry(v) for v in raw.values()) if e is not None]
        if not entries:
            return []
        pipe = self._redis.pipeline()
        for entry in entries:
            pipe.exists(waiting_key(entry.flow_run_id))
        lit = pipe.execute()
        alive = []
        for entry, beacon in zip(entries, lit, strict=True):
            if beacon:
                alive.append(entry)
            else:
                self.close(entry.flow_run_id, "gone")  # its process ended while it waited
        down = find_down_phones(self._redis, (e.serial for e in alive))
        return sorted((e for e in alive if e.serial not in down), key=lambda e: e.since)

    def for_run(self, run_id: str) -> builtins.list[PauseEntry]:
        """The pauses of one run, oldest first."""
        return [e for e in self.list() if e.run_id == run_id]

    def last_event_id(self) -> str:
        """The stream id to follow from for events after now."""
        latest = cast("list[tuple[bytes, dict[bytes, bytes]]]",
                      self._redis.xrevrange(PAUSE_EVENTS_KEY, count=1))
        return latest[0][0].decode() if latest else "0-0"

    def read_events(self, after_id: str, *, block_ms: int | None = None,
                    count: int = 100) -> builtins.list[PauseEvent]:
        """Queue changes after stream id ``after_id`` (waiting up to ``block_ms`` for one)."""
        reply = cast("list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None",
                     self._redis.xread({PAUSE_EVENTS_KEY: after_id}, count=count, block=block_ms))
        events: builtins.list[PauseEvent] = []
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                event = PauseEvent.from_stream(entry_id, fields)
                if event is not None:
                    events.append(event)
        return events


def post_pause_webhook(url: str, notice: PauseNotice, *, timeout_s: float = 10.0,
                       transport: httpx.BaseTransport | None = None) -> threading.Thread:
    """POST ``notice`` to ``url`` from a background thread (failures are logged); returns it."""

    def post() -> None:
        try:
            with httpx.Client(timeout=timeout_s, transport=transport) as client:
                response = client.post(url, content=notice.model_dump_json(),
                                       headers={"content-type": "application/json"})
                response.raise_for_status()
        except httpx.HTTPError as exc:
            # The URL is the operator's own setting; the notice holds no secret.
            log.warning("the pause webhook %s did not take the notice for run %s: %s",
                        url, notice.run_id, type(exc).__name__)

    thread = threading.Thread(target=post, daemon=True, name="pause-webhook")
    thread.start()
    return thread


def _event_json(kind: Literal["opened", "closed"], entry: PauseEntry, outcome: str = "") -> str:
    return PauseEvent(kind=kind, entry=entry, outcome=outcome).model_dump_json()


def _decode_entry(raw: bytes | None) -> PauseEntry | None:
    if raw is None:
        return None
    try:
        return PauseEntry.model_validate_json(raw)
    except ValidationError:
        return None
