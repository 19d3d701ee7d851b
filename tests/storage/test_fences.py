"""Fencing tokens: one writer per sub-task and per run, against the real S3 server and Redis.

Two holders of one sub-task: the first (generation 1) freezes, the sub-task is run
again elsewhere (generation 2) and finishes; the first resumes and tries to write its
capture and trace. Refused, and what the later holder wrote is intact.
"""

from __future__ import annotations

import pytest

from core.config import RedisSettings, S3Settings
from core.models import new_id
from core.redis_client import open_redis
from storage import (
    FencedObjectStore,
    Fences,
    ObjectNotFoundError,
    RunKeys,
    S3ObjectStore,
    StaleWriterError,
    subtask_scope,
)

pytestmark = pytest.mark.services


def test_a_stale_holder_of_a_sub_task_can_never_overwrite_what_the_later_one_wrote(
    s3_settings: S3Settings, redis_url: str,
) -> None:
    s3 = S3ObjectStore(s3_settings)
    fences = Fences(open_redis(RedisSettings(url=redis_url)))
    run_id = new_id("run")
    keys, scope = RunKeys(run_id), subtask_scope(run_id, "meituan-1")
    capture, elements = keys.capture_image("cap-1"), keys.capture_elements("cap-1")
    trace = keys.key("traces", "meituan-1.json")

    first = FencedObjectStore(s3, fences, scope, fences.grant(scope))  # the worker that froze
    first.put_bytes(keys.screen(1, "meituan-1"), b"\x89PNG first's screen")  # before it froze
    later = FencedObjectStore(s3, fences, scope, fences.grant(scope))  # the sub-task re-run
    assert (first.token, later.token) == (1, 2)
    later.put_bytes(capture, b"\x89PNG later")
    later.put_bytes(elements, b'{"by": "later"}')
    later.put_bytes(trace, b'{"steps": "later"}')

    # The first holder resumes: every write of the run's records is refused, new keys too.
    for key, data in ((capture, b"\x89PNG stale"), (elements, b'{"by": "stale"}'),
                      (trace, b'{"steps": "stale"}'), (keys.capture_image("cap-9"), b"stale")):
        with pytest.raises(StaleWriterError, match="older than 2") as refused:
            first.put_bytes(key, data)
        assert "must stop writing" in refused.value.hint
    with pytest.raises(StaleWriterError):
        first.delete(capture)

    assert s3.get_bytes(capture) == b"\x89PNG later"
    assert s3.get_bytes(elements) == b'{"by": "later"}'
    assert s3.get_bytes(trace) == b'{"steps": "later"}'
    with pytest.raises(ObjectNotFoundError):
        s3.get_bytes(keys.capture_image("cap-9"))
    # Reads still work for the stale holder, and the later holder goes on writing.
    assert first.get_bytes(trace) == b'{"steps": "later"}'
    later.put_bytes(trace, b'{"steps": "later, final"}')
    assert s3.get_bytes(trace) == b'{"steps": "later, final"}'


def test_tokens_are_per_scope_and_only_grow(redis_url: str) -> None:
    fences = Fences(open_redis(RedisSettings(url=redis_url)))
    run_id = new_id("run")
    a, b = subtask_scope(run_id, "a"), subtask_scope(run_id, "b")
    assert fences.latest(a) == 0
    assert [fences.grant(a), fences.grant(a), fences.grant(b)] == [1, 2, 1]
    fences.check(a, 2)
    fences.check(b, 1)
    with pytest.raises(StaleWriterError):
        fences.check(a, 1)
