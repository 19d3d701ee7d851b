"""The S3 adapter: one ``ObjectStore`` on the ``minio`` SDK for SeaweedFS and MinIO alike.

All retrying of transient faults happens here, once: the SDK's own urllib3
retries are switched off so a dead server is not retried twice over. Foreign
exceptions (minio, urllib3) are translated in :meth:`S3ObjectStore._call` only.

Writes and reads wait differently for a store that does not answer: a write
gives up after ``s3.retries`` quick retries (the spooling wrapper keeps it on
local disk instead), while a read has nowhere else to go and keeps retrying for
``s3.retry_window_s``, so a restart of the store (about a minute at most) only
makes it slower.
"""

from __future__ import annotations

import io
import itertools
import random
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import urllib3
from minio import Minio
from minio.error import InvalidResponseError, S3Error, ServerError

from core.config import S3Settings
from core.text import mask_url
from storage.errors import (
    ObjectNotFoundError,
    StorageError,
    StoreAccessError,
    StoreUnavailableError,
)
from storage.keys import validate_key
from storage.objects import ObjectInfo, guess_content_type

__all__ = ["S3ObjectStore"]

T = TypeVar("T")

# S3 error codes that mean "try again shortly", not "you asked for something wrong".
_TRANSIENT_CODES = frozenset(
    {"SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "OperationAborted"}
)
_MISSING_CODES = frozenset({"NoSuchKey", "NoSuchObject", "NotFound", "ResourceNotFound"})
_ACCESS_CODES = frozenset(
    {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken"}
)
_PART_SIZE = 5 * 1024 * 1024  # the S3 minimum; larger objects go multipart


class S3ObjectStore:
    """An :class:`~storage.objects.ObjectStore` on one bucket of an S3-compatible server.

    The bucket is created on first write if it does not exist. Transient faults
    are retried with exponential backoff and jitter: ``settings.retries`` times
    for a write, for ``settings.retry_window_s`` for anything else; then
    :class:`StoreUnavailableError` is raised (a spooling wrapper turns that into a
    local write).
    """

    def __init__(self, settings: S3Settings, *, backoff_s: float = 0.1) -> None:
        self._settings = settings
        self._bucket = settings.bucket
        self._backoff_s = backoff_s
        if settings.access_key is None or settings.secret_key is None:
            where = ("run `droidretriever up` (it generates the local store's keys)"
                     if settings.managed else "")
            raise StoreAccessError(
                f"no S3 credentials for {mask_url(self.endpoint)}",
                hint=where or "set DROIDRETRIEVER_S3__ACCESS_KEY and DROIDRETRIEVER_S3__SECRET_KEY",
            )
        timeout = urllib3.Timeout(connect=min(2.0, settings.timeout_s), read=settings.timeout_s)
        self._client = Minio(
            settings.host_port,
            access_key=settings.access_key,
            secret_key=settings.secret_key.get_secret_value(),
            secure=settings.secure,
            region=settings.region,  # known region: presigning needs no round trip
            http_client=urllib3.PoolManager(timeout=timeout, retries=False, maxsize=16),
        )
        self._bucket_ready = False
        self._bucket_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return str(self._settings.endpoint).rstrip("/")

    @property
    def bucket(self) -> str:
        return self._bucket

    # ------------------------------------------------------------------ protocol

    def put_bytes(self, key: str, data: bytes, content_type: str | None = None) -> None:
        """Write ``data`` at ``key`` (multipart above 5 MiB)."""
        validate_key(key)
        kind = content_type or guess_content_type(key)
        self._write(
            key,
            lambda: self._client.put_object(
                self._bucket, key, io.BytesIO(data), len(data),
                content_type=kind, part_size=_PART_SIZE,
            ),
        )

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> None:
        """Upload the file at ``path`` to ``key``."""
        validate_key(key)
        kind = content_type or guess_content_type(key)
        self._write(
            key,
            lambda: self._client.fput_object(
                self._bucket, key, str(path), content_type=kind, part_size=_PART_SIZE
            ),
        )

    def get_bytes(self, key: str) -> bytes:
        """Read the whole object at ``key``."""

        def fetch() -> bytes:
            response = self._client.get_object(self._bucket, key)
            try:
                return response.read()
            finally:
                response.close()
                response.release_conn()

        return self._call(fetch, key=key)

    def stat(self, key: str) -> ObjectInfo:
        """Size, content type, etag and modification time of ``key``."""
        obj = self._call(lambda: self._client.stat_object(self._bucket, key), key=key)
        return ObjectInfo(
            key=key,
            size=obj.size or 0,
            content_type=obj.content_type,
            etag=obj.etag or "",
            modified=obj.last_modified,
        )

    def exists(self, key: str) -> bool:
        """Whether ``key`` holds an object (a missing bucket means no)."""
        try:
            self.stat(key)
        except ObjectNotFoundError:
            return False
        return True

    def list_objects(self, prefix: str = "") -> list[ObjectInfo]:
        """All objects under ``prefix``, sorted by key."""

        def listing() -> list[ObjectInfo]:
            found = self._client.list_objects(self._bucket, prefix=prefix or None, recursive=True)
            return [
                ObjectInfo(
                    key=obj.object_name or "",
                    size=obj.size or 0,
                    etag=obj.etag or "",
                    modified=obj.last_modified,
                )
                for obj in found
                if obj.object_name and not obj.is_dir
            ]

        try:
            return sorted(self._call(listing, key=prefix), key=lambda info: info.key)
        except ObjectNotFoundError:  # no bucket yet: nothing stored
            return []

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key or bucket is fine."""
        try:
            self._call(lambda: self._client.remove_object(self._bucket, key), key=key)
        except ObjectNotFoundError:
            return

    def presigned_get_url(self, key: str, expires: timedelta = timedelta(hours=1)) -> str:
        """A time-limited GET URL for ``key`` (signed locally, no request is made)."""
        return self._call(
            lambda: self._client.presigned_get_object(self._bucket, key, expires=expires), key=key
        )

    # ------------------------------------------------------------------ extras

    def ping(self) -> None:
        """Raise a StorageError unless the server answers an authenticated request (no waiting)."""
        self._call(self._client.list_buckets, key="", quick=True)

    def ensure_bucket(self) -> None:
        """Create the bucket if it is missing (idempotent, also across processes)."""
        with self._bucket_lock:
            if self._bucket_ready:
                return

            def create() -> None:
                if not self._client.bucket_exists(self._bucket):
                    try:
                        self._client.make_bucket(self._bucket)
                    except S3Error as exc:  # another process won the race
                        if exc.code not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                            raise

            self._call(create, key="", quick=True)
            self._bucket_ready = True

    # ------------------------------------------------------------------ internals

    def _write(self, key: str, upload: Callable[[], object]) -> None:
        if not self._bucket_ready:
            self.ensure_bucket()
        try:
            self._call(upload, key=key, quick=True)
        except ObjectNotFoundError:
            # The bucket was removed behind our back: create it again, once.
            self._bucket_ready = False
            self.ensure_bucket()
            self._call(upload, key=key, quick=True)

    def _call(self, operation: Callable[[], T], *, key: str, quick: bool = False) -> T:
        """Run one SDK call with bounded retries; translate every foreign error here.

        ``quick`` (writes, which the spool keeps, and health probes) gives up after
        ``retries``; anything else retries until ``retry_window_s`` has passed.
        """
        deadline = time.monotonic() + self._settings.retry_window_s
        last: Exception | None = None
        for attempt in itertools.count():
            try:
                return operation()
            except S3Error as exc:
                if exc.code in _MISSING_CODES or exc.code == "NoSuchBucket":
                    raise ObjectNotFoundError(key) from exc
                if exc.code in _ACCESS_CODES:
                    raise StoreAccessError(
                        f"the object store at {mask_url(self.endpoint)} refused {exc.code}: {exc.message}",
                        hint="check DROIDRETRIEVER_S3__ACCESS_KEY and DROIDRETRIEVER_S3__SECRET_KEY",
                    ) from exc
                if exc.code not in _TRANSIENT_CODES:
                    raise StorageError(
                        f"the object store rejected the request for {key!r}: "
                        f"{exc.code} {exc.message}",
                        hint="this is a bug or a server misconfiguration; see the server log",
                    ) from exc
                last = exc
            except (ServerError, InvalidResponseError, urllib3.exceptions.HTTPError) as exc:
                last = exc
            except OSError as exc:  # reading the local file for put_file
                raise StorageError(f"cannot read local file for {key!r}: {exc}") from exc
            if attempt >= self._settings.retries if quick else time.monotonic() >= deadline:
                break
            # Exponential backoff with equal jitter, capped at 2 s between tries.
            delay = min(2.0, self._backoff_s * 2 ** min(attempt, 16))
            time.sleep(random.uniform(delay / 2, delay))
        raise StoreUnavailableError(
            f"the object store at {mask_url(self.endpoint)} is unreachable "
            f"({type(last).__name__}: {str(last)[:160]})",
            hint="start it with `droidretriever up`, or check DROIDRETRIEVER_S3__ENDPOINT",
        ) from last
