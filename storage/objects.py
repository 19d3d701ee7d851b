"""The ``ObjectStore`` seam: what every piece that keeps files talks to.

Two implementations ship: :class:`storage.s3.S3ObjectStore` (SeaweedFS here,
MinIO in production; settings choose) and :class:`storage.fake.FakeObjectStore`
(an in-memory test double). :class:`storage.spool.SpoolingObjectStore` wraps
either one so writes survive the store being down.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

__all__ = ["DEFAULT_CONTENT_TYPE", "ObjectInfo", "ObjectStore", "guess_content_type"]

DEFAULT_CONTENT_TYPE = "application/octet-stream"

_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".md": "text/markdown; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml",
    ".wav": "audio/wav",
}


def guess_content_type(key: str) -> str:
    """The content type for a key by its extension (the few kinds this project writes)."""
    suffix = Path(key).suffix.lower()
    return _TYPES.get(suffix, DEFAULT_CONTENT_TYPE)


class ObjectInfo(BaseModel):
    """What the store knows about one object."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    size: int
    content_type: str | None = None  # listings do not carry it; stat() does
    etag: str = ""
    modified: datetime | None = None


@runtime_checkable
class ObjectStore(Protocol):
    """Keys are ``/``-separated strings (see :mod:`storage.keys`); values are bytes.

    Errors: :class:`~storage.errors.ObjectNotFoundError` for a missing key,
    :class:`~storage.errors.StoreUnavailableError` when the store cannot be
    reached after the adapter's own bounded retries,
    :class:`~storage.errors.StoreAccessError` when it refuses.
    """

    def put_bytes(self, key: str, data: bytes, content_type: str | None = None) -> None:
        """Write (or overwrite) ``key``; the content type defaults from the extension."""
        ...

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> None:
        """Upload a local file to ``key``."""
        ...

    def get_bytes(self, key: str) -> bytes:
        """Read the whole object."""
        ...

    def stat(self, key: str) -> ObjectInfo:
        """Size, content type and etag of one object."""
        ...

    def exists(self, key: str) -> bool:
        """Whether ``key`` holds an object."""
        ...

    def list_objects(self, prefix: str = "") -> list[ObjectInfo]:
        """Every object whose key starts with ``prefix``, sorted by key."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; deleting a missing key is not an error."""
        ...

    def presigned_get_url(self, key: str, expires: timedelta = timedelta(hours=1)) -> str:
        """A URL anyone holding it can GET until it expires (for the dashboard)."""
        ...
