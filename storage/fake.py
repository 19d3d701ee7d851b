"""``FakeObjectStore``: an in-memory ObjectStore test double that behaves.

It keeps state like a real store (overwrite, list by prefix, content types,
etags) and can be told to fail: ``fail_next(n)`` makes the next ``n`` calls
raise, ``set_unavailable(True)`` makes every call raise until switched back,
which is how the spool and callers' retry paths are exercised without a server.
"""

from __future__ import annotations

import hashlib
import threading
from datetime import timedelta
from pathlib import Path

from core.models import utcnow
from storage.errors import ObjectNotFoundError, StorageError, StoreUnavailableError
from storage.keys import validate_key
from storage.objects import ObjectInfo, guess_content_type

__all__ = ["FakeObjectStore"]


class FakeObjectStore:
    """In-memory :class:`~storage.objects.ObjectStore` for unit tests (a fake, not a mock)."""

    def __init__(self, endpoint: str = "memory://fake") -> None:
        self._endpoint = endpoint
        self._objects: dict[str, tuple[bytes, ObjectInfo]] = {}
        self._lock = threading.Lock()
        self._failures_left = 0
        self._unavailable = False
        self._failure: type[StorageError] = StoreUnavailableError
        self.calls: list[str] = []  # operation names, in order, for assertions on traffic

    # ------------------------------------------------------------------ failure control

    def fail_next(self, count: int = 1, error: type[StorageError] = StoreUnavailableError) -> None:
        """Make the next ``count`` calls raise ``error``."""
        with self._lock:
            self._failures_left = count
            self._failure = error

    def set_unavailable(self, unavailable: bool) -> None:
        """Make every call raise StoreUnavailableError (True) or behave again (False)."""
        with self._lock:
            self._unavailable = unavailable

    def _enter(self, operation: str) -> None:
        with self._lock:
            self.calls.append(operation)
            if self._unavailable:
                raise StoreUnavailableError(
                    f"the fake object store {self._endpoint} is set unavailable",
                    hint="call set_unavailable(False)",
                )
            if self._failures_left > 0:
                self._failures_left -= 1
                raise self._failure(f"the fake object store failed {operation} on request")

    # ------------------------------------------------------------------ protocol

    def put_bytes(self, key: str, data: bytes, content_type: str | None = None) -> None:
        """Store a copy of ``data`` at ``key``."""
        validate_key(key)
        self._enter("put_bytes")
        info = ObjectInfo(
            key=key,
            size=len(data),
            content_type=content_type or guess_content_type(key),
            etag=hashlib.md5(data, usedforsecurity=False).hexdigest(),
            modified=utcnow(),
        )
        with self._lock:
            self._objects[key] = (bytes(data), info)

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> None:
        """Store the contents of ``path`` at ``key``."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StorageError(f"cannot read local file for {key!r}: {exc}") from exc
        self.put_bytes(key, data, content_type)

    def get_bytes(self, key: str) -> bytes:
        """The bytes at ``key``."""
        self._enter("get_bytes")
        with self._lock:
            if key not in self._objects:
                raise ObjectNotFoundError(key)
            return self._objects[key][0]

    def stat(self, key: str) -> ObjectInfo:
        """Metadata of ``key``."""
        self._enter("stat")
        with self._lock:
            if key not in self._objects:
                raise ObjectNotFoundError(key)
            return self._objects[key][1]

    def exists(self, key: str) -> bool:
        """Whether ``key`` is stored."""
        self._enter("exists")
        with self._lock:
            return key in self._objects

    def list_objects(self, prefix: str = "") -> list[ObjectInfo]:
        """Objects under ``prefix`` sorted by key (content type left out, as S3 listings)."""
        self._enter("list_objects")
        with self._lock:
            return [
                info.model_copy(update={"content_type": None})
                for key, (_, info) in sorted(self._objects.items())
                if key.startswith(prefix)
            ]

    def delete(self, key: str) -> None:
        """Forget ``key`` (missing is fine)."""
        self._enter("delete")
        with self._lock:
            self._objects.pop(key, None)

    def presigned_get_url(self, key: str, expires: timedelta = timedelta(hours=1)) -> str:
        """A fake URL that still names the key and the expiry, for display tests."""
        self._enter("presigned_get_url")
        return f"{self._endpoint}/{key}?expires={int(expires.total_seconds())}"
