"""Write-behind spool: when the object store is down, writes land on local disk.

Each spooled object is ONE file ``<sha256(key)>.entry``: a JSON header line
(key, content type, size, a token) followed by the raw bytes. It is written to
a temporary name (0600, in a 0700 folder), fsynced and renamed into place, so a crash leaves either the
old entry or the new one, never half of either. The key's hash is the file
name, so spooling the same key twice keeps only the newest bytes (a retried
write overwrites, as in the store).

Flushing uploads each entry, then removes it only if its token is unchanged,
so an entry replaced while its older version was uploading is not lost. An
``flock`` on ``.lock`` makes writers and flushers in several processes agree.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from core.models import utcnow
from core.private_files import FILE_MODE, make_private_dir, write_private
from storage.errors import SpoolError, StorageError, StoreUnavailableError
from storage.keys import validate_key
from storage.objects import ObjectInfo, ObjectStore, guess_content_type

__all__ = ["Spool", "SpoolEntry", "SpoolUsage", "SpoolingObjectStore"]

log = logging.getLogger(__name__)

_SUFFIX = ".entry"


class SpoolEntry(BaseModel):
    """The header of one spooled object."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    content_type: str
    size: int
    token: str
    spooled_at: datetime


class SpoolUsage(BaseModel):
    """How much is waiting to be uploaded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entries: int
    bytes: int


class Spool:
    """A folder of objects waiting for the store to come back."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / (hashlib.sha256(key.encode()).hexdigest() + _SUFFIX)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            make_private_dir(self.directory)
            handle = os.fdopen(os.open(self.directory / ".lock", os.O_WRONLY | os.O_CREAT
                                       | os.O_APPEND, FILE_MODE), "a")
        except OSError as exc:
            raise SpoolError(
                f"cannot use the spool folder {self.directory}: {exc}",
                hint="make it writable, or point DROIDRETRIEVER_STATE_DIR elsewhere",
            ) from exc
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def write(self, key: str, data: bytes, content_type: str | None = None) -> SpoolEntry:
        """Spool ``data`` for ``key`` atomically, replacing any older spooled version."""
        entry = SpoolEntry(
            key=validate_key(key),
            content_type=content_type or guess_content_type(key),
            size=len(data),
            token=secrets.token_hex(8),
            spooled_at=utcnow(),
        )
        target = self._path(key)
        with self._locked():
            try:
                write_private(target, entry.model_dump_json().encode() + b"\n" + data, sync=True)
            except OSError as exc:
                raise SpoolError(
                    f"cannot spool {key!r} to {self.directory}: {exc}",
                    hint="free disk space or fix permissions; the write was NOT kept",
                ) from exc
        return entry

    def _read(self, path: Path) -> tuple[SpoolEntry, bytes] | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SpoolError(f"cannot read spooled object {path}: {exc}") from exc
        header, _, data = raw.partition(b"\n")
        try:
            return SpoolEntry.model_validate_json(header), data
        except ValidationError as exc:
            raise SpoolError(
                f"spool file {path} is damaged: {exc.errors()[0]['msg']}",
                hint="move it aside; its key is unknown so it cannot be uploaded",
            ) from exc

    def read(self, key: str) -> tuple[SpoolEntry, bytes] | None:
        """The spooled header and bytes for ``key``, or None."""
        return self._read(self._path(key))

    def contains(self, key: str) -> bool:
        """Whether ``key`` waits in the spool."""
        return self._path(key).is_file()

    def iter_entries(self) -> Iterator[tuple[SpoolEntry, bytes]]:
        """Spooled objects, oldest first."""
        if not self.directory.is_dir():
            return
        paths = sorted(self.directory.glob("*" + _SUFFIX), key=lambda p: p.stat().st_mtime_ns)
        for path in paths:
            found = self._read(path)
            if found is not None:
                yield found

    def remove(self, key: str, token: str | None = None) -> bool:
        """Drop ``key``'s entry; with ``token``, only if it was not replaced since."""
        path = self._path(key)
        with self._locked():
            if token is not None:
                current = self._read(path)
                if current is None or current[0].token != token:
                    return False
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise SpoolError(f"cannot remove spooled object {path}: {exc}") from exc
        return True

    def usage(self) -> SpoolUsage:
        """Entries and bytes waiting (0 when the folder does not exist)."""
        if not self.directory.is_dir():
            return SpoolUsage(entries=0, bytes=0)
        sizes = [p.stat().st_size for p in self.directory.glob("*" + _SUFFIX)]
        return SpoolUsage(entries=len(sizes), bytes=sum(sizes))


class SpoolingObjectStore:
    """Wraps an ObjectStore: writes go to the spool while the store is unreachable.

    Reads see spooled objects first (they are newer than the store's copy).
    After a failure the store is not tried again for ``retry_after_s``, so a
    dead server does not cost every write the adapter's full retry time. The
    first successful write after that flushes the spool.
    """

    def __init__(self, inner: ObjectStore, spool: Spool, *, retry_after_s: float = 5.0) -> None:
        self.inner = inner
        self.spool = spool
        self._retry_after_s = retry_after_s
        self._offline_until = 0.0

    # ------------------------------------------------------------------ writes

    def put_bytes(self, key: str, data: bytes, content_type: str | None = None) -> None:
        """Write to the store, or to the spool when the store is unreachable."""
        validate_key(key)
        if self._offline() or self.spool.contains(key):
            # An older version of this key waits in the spool: queue behind it so
            # the flush cannot overwrite this newer write with the older bytes.
            self.spool.write(key, data, content_type)
            self._try_flush()
            return
        try:
            self.inner.put_bytes(key, data, content_type)
        except StoreUnavailableError as exc:
            self._go_offline(exc)
            self.spool.write(key, data, content_type)
            return
        self._try_flush()

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> None:
        """Upload a file; spooled as bytes when the store is unreachable."""
        if self._offline() or self.spool.contains(key):
            self.put_bytes(key, self._read_local(path), content_type)
            return
        try:
            self.inner.put_file(key, path, content_type)
        except StoreUnavailableError as exc:
            self._go_offline(exc)
            self.spool.write(key, self._read_local(path), content_type)
            return
        self._try_flush()

    def delete(self, key: str) -> None:
        """Remove from the spool and the store (the store must be reachable)."""
        self.spool.remove(key)
        self.inner.delete(key)

    # ------------------------------------------------------------------ reads

    def get_bytes(self, key: str) -> bytes:
        """The spooled bytes if ``key`` waits in the spool, else the store's."""
        found = self.spool.read(key)
        if found is not None:
            return found[1]
        return self.inner.get_bytes(key)

    def stat(self, key: str) -> ObjectInfo:
        """Metadata, from the spool header when the object is still spooled."""
        found = self.spool.read(key)
        if found is not None:
            entry = found[0]
            return ObjectInfo(
                key=key, size=entry.size, content_type=entry.content_type,
                modified=entry.spooled_at,
            )
        return self.inner.stat(key)

    def exists(self, key: str) -> bool:
        """Spooled or stored."""
        return self.spool.contains(key) or self.inner.exists(key)

    def list_objects(self, prefix: str = "") -> list[ObjectInfo]:
        """The store's listing merged with spooled objects under ``prefix``."""
        merged = {info.key: info for info in self.inner.list_objects(prefix)}
        for entry, _ in self.spool.iter_entries():
            if entry.key.startswith(prefix):
                merged[entry.key] = ObjectInfo(
                    key=entry.key, size=entry.size, modified=entry.spooled_at
                )
        return [merged[key] for key in sorted(merged)]

    def presigned_get_url(self, key: str, expires: timedelta = timedelta(hours=1)) -> str:
        """A URL from the store; a still-spooled object is flushed first."""
        if self.spool.contains(key):
            self.flush()
            if self.spool.contains(key):
                raise StoreUnavailableError(
                    f"{key!r} is still spooled locally: the object store is unreachable",
                    hint="start the store (`droidretriever up`); the spool flushes itself",
                )
        return self.inner.presigned_get_url(key, expires)

    # ------------------------------------------------------------------ spool control

    def flush(self) -> int:
        """Upload every spooled object; return how many were uploaded.

        Raises StoreUnavailableError if the store is still down (what was
        uploaded before that stays uploaded; the rest stays spooled).
        """
        uploaded = 0
        for entry, data in self.spool.iter_entries():
            try:
                self.inner.put_bytes(entry.key, data, entry.content_type)
            except StoreUnavailableError as exc:
                self._go_offline(exc)
                raise
            self.spool.remove(entry.key, token=entry.token)
            uploaded += 1
        if uploaded:
            log.info("flushed %d spooled object(s) to the store", uploaded)
        self._offline_until = 0.0
        return uploaded

    def spool_size(self) -> SpoolUsage:
        """What waits in the spool (for ``droidretriever status``)."""
        return self.spool.usage()

    def _try_flush(self) -> None:
        if self._offline() or self.spool.usage().entries == 0:
            return
        try:
            self.flush()
        except StoreUnavailableError:
            return  # stays spooled; the next write after retry_after_s tries again

    def _offline(self) -> bool:
        return time.monotonic() < self._offline_until

    def _go_offline(self, exc: StoreUnavailableError) -> None:
        if not self._offline():
            log.warning("object store unreachable, spooling writes locally: %s", exc)
        self._offline_until = time.monotonic() + self._retry_after_s

    @staticmethod
    def _read_local(path: Path) -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise StorageError(f"cannot read local file {path}: {exc}") from exc
