"""Errors of the storage layer (object store, spool, manifests, run events).

    core.errors.DroidRetrieverError
     +-- StorageError                  anything storage raises on purpose
          +-- ObjectNotFoundError      the key does not exist (nor is it spooled)
          +-- StoreUnavailableError    the object store cannot be reached after retries
          +-- StoreAccessError         the store refused us: credentials, bucket policy
          +-- SpoolError               the local spool folder cannot be written or read
          +-- ManifestError            a run manifest is missing or not valid JSON
          +-- MapFormatError           a stored app map does not parse as an AppMap
          +-- EventStreamError         Redis (the live event stream) failed
          +-- StaleWriterError         a write carried a fencing token older than the latest

Adapters (``storage.s3``, ``storage.events``) translate minio, urllib3 and
redis exceptions here once and re-raise ``from exc``; callers never see a
foreign exception.
"""

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = [
    "EventStreamError",
    "ManifestError",
    "MapFormatError",
    "ObjectNotFoundError",
    "SpoolError",
    "StaleWriterError",
    "StorageError",
    "StoreAccessError",
    "StoreUnavailableError",
]


class StorageError(DroidRetrieverError):
    """Root of the storage subtree."""


class ObjectNotFoundError(StorageError):
    """The key does not exist in the store or the spool."""

    def __init__(self, key: str, *, hint: str = "") -> None:
        super().__init__(f"no object at {key!r}", hint=hint or "check the run id and the key")
        self.key = key


class StoreUnavailableError(StorageError):
    """The object store did not answer (connection refused, timeouts, 5xx) after retries."""


class StoreAccessError(StorageError):
    """The object store answered but refused the request (credentials, policy, bad request)."""


class SpoolError(StorageError):
    """The local spool folder could not be written or read."""


class ManifestError(StorageError):
    """A run manifest is missing or does not parse as a RunManifest."""


class MapFormatError(StorageError):
    """A stored app map does not parse as an AppMap (damaged, or from another release)."""


class EventStreamError(StorageError):
    """The Redis event stream could not be written or read."""


class StaleWriterError(StorageError):
    """A write was refused: its writer's fencing token is older than the latest granted.

    The writer lost its claim (its lease expired while it was frozen, the sub-task was
    run again elsewhere, the run was stopped or marked crashed); what it holds is stale.
    """

    def __init__(self, scope: str, token: int, latest: int) -> None:
        super().__init__(
            f"refused a write for {scope}: this writer's token {token} is older than {latest}",
            hint="the run or sub-task was taken over or ended; this process must stop writing it")
        self.scope, self.token, self.latest = scope, token, latest
