"""Fencing tokens: a run's records are written by one owner at a time, and only by it.

A *scope* is what one owner writes: ``run:<run_id>`` (the manifest, written by the
run's flow process) or ``subtask:<run_id>:<subtask_id>`` (the captures, screens and
trace of one sub-task, written by the phone worker running it). Each time a scope is
granted to a new owner (a worker takes the sub-task, a process seals an ended run),
:meth:`Fences.grant` increments its counter in Redis and returns the new value: the
owner's token. Every write carries the token and is refused
(:class:`~storage.errors.StaleWriterError`) when a later one has been granted, so a
process that was frozen (SIGSTOP, a long GC, a lost network) and resumes after its
sub-task ran elsewhere cannot overwrite what the later owner wrote.

The check is a Redis read made immediately before the object store's PUT, not a
conditional PUT: the S3 servers this project runs on (SeaweedFS, MinIO) do not all
honour ``If-Match`` on PUT. docs/decisions.md says what that leaves open (a writer
frozen between the check and its PUT) and why it is acceptable.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import redis

from storage.errors import EventStreamError, StaleWriterError
from storage.objects import ObjectInfo, ObjectStore

__all__ = ["FencedObjectStore", "Fences", "run_scope", "subtask_scope"]

_TTL_S = 30 * 24 * 3600  # as long as a run's records are worth protecting


def run_scope(run_id: str) -> str:
    """The scope of a run's manifest."""
    return f"run:{run_id}"


def subtask_scope(run_id: str, subtask_id: str) -> str:
    """The scope of one sub-task's captures, screens and trace."""
    return f"subtask:{run_id}:{subtask_id}"


class Fences:
    """Grant and check fencing tokens on one Redis (``fence:<scope>`` counters)."""

    def __init__(self, client: redis.Redis[bytes]) -> None:
        self._redis = client

    @staticmethod
    def key(scope: str) -> str:
        return f"fence:{scope}"

    def grant(self, scope: str) -> int:
        """A new token for ``scope``, newer than every earlier one: earlier owners are fenced off."""
        try:
            pipe = self._redis.pipeline()
            pipe.incr(self.key(scope))
            pipe.expire(self.key(scope), _TTL_S)
            token, _ = pipe.execute()
        except redis.RedisError as exc:
            raise EventStreamError(f"cannot grant a fencing token for {scope}: {exc}",
                                   hint="is Redis up? `droidretriever status`") from exc
        return int(token)

    def latest(self, scope: str) -> int:
        """The newest token granted for ``scope`` (0: none yet)."""
        try:
            raw = self._redis.get(self.key(scope))
        except redis.RedisError as exc:
            raise EventStreamError(f"cannot read the fencing token of {scope}: {exc}",
                                   hint="is Redis up? `droidretriever status`") from exc
        return int(raw) if raw is not None else 0

    def check(self, scope: str, token: int) -> None:
        """Raise :class:`StaleWriterError` when a token newer than ``token`` was granted."""
        latest = self.latest(scope)
        if latest > token:
            raise StaleWriterError(scope, token, latest)


class FencedObjectStore:
    """An :class:`ObjectStore` whose writes are refused once its owner's token is stale.

    Reads pass through. ``put_bytes``, ``put_file`` and ``delete`` check the token
    first and raise :class:`StaleWriterError` without touching the store.
    """

    def __init__(self, inner: ObjectStore, fences: Fences, scope: str, token: int) -> None:
        self.inner = inner
        self.fences = fences
        self.scope = scope
        self.token = token

    def put_bytes(self, key: str, data: bytes, content_type: str | None = None) -> None:
        self.fences.check(self.scope, self.token)
        self.inner.put_bytes(key, data, content_type)

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> None:
        self.fences.check(self.scope, self.token)
        self.inner.put_file(key, path, content_type)

    def delete(self, key: str) -> None:
        self.fences.check(self.scope, self.token)
        self.inner.delete(key)

    def get_bytes(self, key: str) -> bytes:
        return self.inner.get_bytes(key)

    def stat(self, key: str) -> ObjectInfo:
        return self.inner.stat(key)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list_objects(self, prefix: str = "") -> list[ObjectInfo]:
        return self.inner.list_objects(prefix)

    def presigned_get_url(self, key: str, expires: timedelta = timedelta(hours=1)) -> str:
        return self.inner.presigned_get_url(key, expires)
