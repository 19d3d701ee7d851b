"""Run events: a Redis stream per run for live views, JSONL in the object store for the record.

Live: ``XADD runs:<run_id>:events`` with the stream id ``0-<seq>``. A Lua
script increments ``runs:<run_id>:seq`` and adds the entry in one step, so
``seq`` is gap-free and ordered even with many publishers (one Celery worker
per device), and a reader resumes from a seq (the SSE ``Last-Event-ID``) by
reading after that id. The stream is trimmed (``MAXLEN ~``) and expires a
while after the run's last event: it is a live view, not the record.

Record: each publisher buffers the events it published and writes them as an
immutable segment ``runs/<run_id>/events/<first>-<last>.jsonl`` when an
important event arrives, the buffer is full, or enough time has passed. S3
cannot append, and several workers publish for one run, so segments (unique
by seq range, safely rewritten on retry) avoid both rewriting one growing
object and racing on it. On ``run_finished`` the segments are merged into
``runs/<run_id>/events.jsonl`` and removed. Replay reads that file plus any
segments still around (a crashed run is replayable too).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar, cast

import redis
from pydantic import ValidationError

from core.models import RunEvent, RunEventKind
from storage.errors import EventStreamError, ObjectNotFoundError, StorageError
from storage.keys import RunKeys, seq_key, stream_key
from storage.objects import ObjectStore

__all__ = [
    "FLUSH_KINDS",
    "RunEventPublisher",
    "RunEventReader",
    "decode_stream_entry",
    "iter_replay",
]

T = TypeVar("T")

# Events worth a write to the record at once: a crash right after them would
# otherwise lose what a person most wants to see afterwards.
FLUSH_KINDS = frozenset(
    {
        RunEventKind.PLAN_READY,
        RunEventKind.CAPTURE_SAVED,
        RunEventKind.NEEDS_USER,
        RunEventKind.SUBTASK_FINISHED,
        RunEventKind.REPORT_READY,
        RunEventKind.RUN_FINISHED,
        RunEventKind.ERROR,
    }
)

_PUBLISH = """
local seq = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '0-' .. seq, 'event', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return seq
"""


def _redis_call(what: str, operation: Callable[[], T]) -> T:
    try:
        return operation()
    except redis.RedisError as exc:
        raise EventStreamError(
            f"cannot {what}: Redis failed ({type(exc).__name__}: {exc})",
            hint="start Redis with `droidretriever up`, or check DROIDRETRIEVER_REDIS__URL",
        ) from exc


def decode_stream_entry(entry_id: bytes | str, fields: dict[Any, Any]) -> RunEvent:
    """One entry of a run's stream as its event, ``seq`` from the entry id (async readers use it)."""
    ident = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    raw = fields.get(b"event", fields.get("event"))
    if raw is None:
        raise EventStreamError(f"stream entry {ident} has no 'event' field")
    try:
        event = RunEvent.model_validate_json(raw)
    except ValidationError as exc:
        raise EventStreamError(
            f"stream entry {ident} is not a RunEvent: {exc.errors()[0]['msg']}",
            hint="was it written by another version of DroidRetriever?",
        ) from exc
    return event.model_copy(update={"seq": int(ident.split("-", 1)[1])})


def _encode_jsonl(events: Iterable[RunEvent]) -> bytes:
    return b"".join(event.model_dump_json().encode() + b"\n" for event in events)


def _decode_jsonl(raw: bytes, key: str) -> list[RunEvent]:
    events = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            events.append(RunEvent.model_validate_json(line))
        except ValidationError as exc:
            raise StorageError(
                f"line {number} of {key} is not a RunEvent: {exc.errors()[0]['msg']}"
            ) from exc
    return events


class _Buffer:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.last_flush = time.monotonic()


class RunEventPublisher:
    """Publishes events live (Redis) and records them (object store). Thread-safe."""

    def __init__(
        self,
        client: redis.Redis[bytes],
        store: ObjectStore,
        *,
        maxlen: int = 10_000,
        ttl_s: int = 7 * 24 * 3600,
        flush_every: int = 64,
        flush_interval_s: float = 5.0,
    ) -> None:
        self._client = client
        self._store = store
        self._maxlen = maxlen
        self._ttl_s = ttl_s
        self._flush_every = flush_every
        self._flush_interval_s = flush_interval_s
        self._script = client.register_script(_PUBLISH)
        self._buffers: dict[str, _Buffer] = {}
        self._lock = threading.Lock()

    def publish(self, event: RunEvent) -> RunEvent:
        """Assign the next seq, add the event to the live stream and the record buffer.

        Returns the event as published (with its seq). A ``run_finished`` event
        also writes the run's ``events.jsonl``.
        """
        body = event.model_dump_json(exclude={"seq"})
        run_id = event.run_id
        seq = _redis_call(
            f"publish a {event.kind} event of run {run_id}",
            lambda: int(
                self._script(
                    keys=[stream_key(run_id), seq_key(run_id)],
                    args=[self._maxlen, body, self._ttl_s],
                )
            ),
        )
        published = event.model_copy(update={"seq": seq})
        with self._lock:
            buffer = self._buffers.setdefault(run_id, _Buffer())
            buffer.events.append(published)
            due = (
                event.kind in FLUSH_KINDS
                or len(buffer.events) >= self._flush_every
                or time.monotonic() - buffer.last_flush >= self._flush_interval_s
            )
        if due:
            self.flush(run_id)
        if event.kind is RunEventKind.RUN_FINISHED:
            self.assemble(run_id)
        return published

    def flush(self, run_id: str | None = None) -> None:
        """Write buffered events (of one run, or all) as segments to the store."""
        with self._lock:
            run_ids = [run_id] if run_id is not None else list(self._buffers)
            batches = []
            for rid in run_ids:
                buffer = self._buffers.get(rid)
                if buffer is None or not buffer.events:
                    continue
                batches.append((rid, buffer.events))
                buffer.events = []
                buffer.last_flush = time.monotonic()
        for rid, events in batches:
            events.sort(key=lambda e: e.seq)
            key = RunKeys(rid).event_segment(events[0].seq, events[-1].seq)
            try:
                self._store.put_bytes(key, _encode_jsonl(events), "application/x-ndjson")
            except StorageError:
                with self._lock:  # keep them for the next flush; nothing is dropped
                    self._buffers[rid].events[:0] = events
                raise

    def assemble(self, run_id: str) -> int:
        """Merge the run's segments into ``events.jsonl``; return how many events it holds."""
        self.flush(run_id)
        keys = RunKeys(run_id)
        events = list(iter_replay(self._store, run_id))
        self._store.put_bytes(keys.events, _encode_jsonl(events), "application/x-ndjson")
        for info in self._store.list_objects(keys.event_segments_prefix):
            self._store.delete(info.key)
        with self._lock:
            self._buffers.pop(run_id, None)
        return len(events)

    def close(self) -> None:
        """Flush every run's buffer (call when the worker or flow shuts down)."""
        self.flush()


class RunEventReader:
    """Reads a run's live stream from Redis."""

    def __init__(self, client: redis.Redis[bytes]) -> None:
        self._client = client

    def read_after(self, run_id: str, after_seq: int = 0, count: int = 1000) -> list[RunEvent]:
        """Events with seq > ``after_seq`` currently in the stream, without waiting."""
        entries = _redis_call(
            f"read the events of run {run_id}",
            lambda: cast(
                "list[tuple[bytes, dict[bytes, bytes]]]",
                self._client.xrange(stream_key(run_id), min=f"(0-{after_seq}", count=count),
            ),
        )
        return [decode_stream_entry(entry_id, fields) for entry_id, fields in entries or []]

    def iter_live(
        self,
        run_id: str,
        after_seq: int = 0,
        *,
        idle_timeout_s: float = 30.0,
        block_s: float = 1.0,
    ) -> Iterator[RunEvent]:
        """Yield new events as they arrive, blocking between them.

        Ends after ``run_finished``, or when nothing arrived for ``idle_timeout_s``.
        """
        last = after_seq
        idle_since = time.monotonic()
        block_ms = max(1, int(block_s * 1000))
        while True:
            for _stream, entries in self._xread(run_id, last, block_ms):
                for entry_id, fields in entries:
                    event = decode_stream_entry(entry_id, fields)
                    last = event.seq
                    idle_since = time.monotonic()
                    yield event
                    if event.kind is RunEventKind.RUN_FINISHED:
                        return
            if time.monotonic() - idle_since >= idle_timeout_s:
                return


    def _xread(
        self, run_id: str, after_seq: int, block_ms: int
    ) -> list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]]:
        streams: dict[Any, Any] = {stream_key(run_id): f"0-{after_seq}"}
        reply = _redis_call(
            f"read the live events of run {run_id}",
            lambda: cast(
                "list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None",
                self._client.xread(streams, count=100, block=block_ms),
            ),
        )
        return reply or []


def iter_replay(store: ObjectStore, run_id: str) -> Iterator[RunEvent]:
    """A finished (or crashed) run's events from the object store, in seq order.

    Reads ``events.jsonl`` and any segments not merged yet; raises
    ObjectNotFoundError when the run recorded no events at all.
    """
    keys = RunKeys(run_id)
    by_seq: dict[int, RunEvent] = {}
    sources = [info.key for info in store.list_objects(keys.event_segments_prefix)]
    if store.exists(keys.events):
        sources.insert(0, keys.events)
    if not sources:
        raise ObjectNotFoundError(
            keys.events, hint=f"run {run_id!r} recorded no events; check the run id"
        )
    for key in sources:
        for event in _decode_jsonl(store.get_bytes(key), key):
            by_seq[event.seq] = event
    for seq in sorted(by_seq):
        yield by_seq[seq]
