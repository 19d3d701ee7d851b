"""Run events against real Redis: publish, read live, replay from the store."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis

from core.config import RedisSettings, S3Settings
from core.models import RunEvent, RunEventKind
from core.redis_client import open_redis
from droidretriever.testing import free_port
from storage import (
    EventStreamError,
    FakeObjectStore,
    ObjectNotFoundError,
    RunEventPublisher,
    RunEventReader,
    RunKeys,
    S3ObjectStore,
    iter_replay,
)


@pytest.fixture()
def client(redis_url: str) -> Iterator[redis.Redis[bytes]]:
    connection = open_redis(RedisSettings(url=redis_url))
    yield connection
    connection.close()


def _event(run_id: str, kind: RunEventKind, message: str = "") -> RunEvent:
    return RunEvent(run_id=run_id, kind=kind, message=message)


def test_publish_read_live_and_replay_from_real_s3(
    client: redis.Redis[bytes], redis_url: str, s3_settings: S3Settings
) -> None:
    run_id = "run-events-live"
    store = S3ObjectStore(s3_settings)
    publisher = RunEventPublisher(client, store)
    received: list[RunEvent] = []
    reader = RunEventReader(open_redis(RedisSettings(url=redis_url)))
    ready = threading.Event()

    def follow() -> None:
        ready.set()
        received.extend(reader.iter_live(run_id, idle_timeout_s=10, block_s=0.2))

    follower = threading.Thread(target=follow)
    follower.start()
    ready.wait()
    published = [publisher.publish(_event(run_id, RunEventKind.RUN_STARTED, "价格"))]
    published += [publisher.publish(_event(run_id, RunEventKind.LOG, f"step {i}")) for i in range(5)]
    published.append(publisher.publish(_event(run_id, RunEventKind.RUN_FINISHED)))
    follower.join(timeout=15)

    assert [e.seq for e in published] == list(range(1, 8))
    assert received == published  # the live reader stops by itself after run_finished
    assert list(iter_replay(store, run_id)) == published
    keys = RunKeys(run_id)
    assert store.exists(keys.events)
    assert store.list_objects(keys.event_segments_prefix) == []  # merged and removed


def test_seq_is_gap_free_with_concurrent_publishers(client: redis.Redis[bytes]) -> None:
    run_id = "run-events-concurrent"
    store = FakeObjectStore()
    publishers = [RunEventPublisher(client, store, flush_every=7) for _ in range(4)]

    def publish_many(publisher: RunEventPublisher) -> None:
        for i in range(25):
            publisher.publish(_event(run_id, RunEventKind.STEP, str(i)))
        publisher.close()

    threads = [threading.Thread(target=publish_many, args=(p,)) for p in publishers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    live = RunEventReader(client).read_after(run_id)
    assert [e.seq for e in live] == list(range(1, 101))
    replayed = list(iter_replay(store, run_id))  # from segments: the run never finished
    assert [e.seq for e in replayed] == list(range(1, 101))


def test_reader_resumes_after_a_seq(client: redis.Redis[bytes]) -> None:
    run_id = "run-events-resume"
    publisher = RunEventPublisher(client, FakeObjectStore())
    for i in range(6):
        publisher.publish(_event(run_id, RunEventKind.LOG, str(i)))
    resumed = RunEventReader(client).read_after(run_id, after_seq=4)
    assert [(e.seq, e.message) for e in resumed] == [(5, "4"), (6, "5")]


def test_important_events_are_recorded_at_once(client: redis.Redis[bytes]) -> None:
    run_id = "run-events-flush"
    store = FakeObjectStore()
    publisher = RunEventPublisher(client, store, flush_every=100, flush_interval_s=3600)
    publisher.publish(_event(run_id, RunEventKind.LOG, "buffered"))
    assert store.list_objects(RunKeys(run_id).event_segments_prefix) == []
    publisher.publish(_event(run_id, RunEventKind.NEEDS_USER, "login screen"))
    assert [e.message for e in iter_replay(store, run_id)] == ["buffered", "login screen"]


def test_a_failed_record_write_keeps_the_events(client: redis.Redis[bytes]) -> None:
    run_id = "run-events-store-down"
    store = FakeObjectStore()
    publisher = RunEventPublisher(client, store)
    store.fail_next(1)
    with pytest.raises(Exception, match="failed put_bytes"):
        publisher.publish(_event(run_id, RunEventKind.PLAN_READY))
    publisher.publish(_event(run_id, RunEventKind.RUN_FINISHED))
    assert [e.kind for e in iter_replay(store, run_id)] == [
        RunEventKind.PLAN_READY, RunEventKind.RUN_FINISHED,
    ]


def test_stream_is_bounded(client: redis.Redis[bytes]) -> None:
    run_id = "run-events-bounded"
    publisher = RunEventPublisher(client, FakeObjectStore(), maxlen=50)
    for i in range(300):
        publisher.publish(_event(run_id, RunEventKind.LOG, str(i)))
    assert client.xlen(f"runs:{run_id}:events") < 300


def test_replay_of_an_unknown_run_and_redis_down() -> None:
    with pytest.raises(ObjectNotFoundError) as missing:
        list(iter_replay(FakeObjectStore(), "run-never"))
    assert "recorded no events" in missing.value.hint
    dead = open_redis(RedisSettings(url=f"redis://127.0.0.1:{free_port()}/0"), retry_window_s=0)
    with pytest.raises(EventStreamError) as info:
        RunEventPublisher(dead, FakeObjectStore()).publish(_event("r", RunEventKind.LOG))
    assert "DROIDRETRIEVER_REDIS__URL" in info.value.hint
