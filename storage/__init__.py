"""Object storage (S3 API), the local spool, run manifests and run events.

    open_object_store(settings)  ->  SpoolingObjectStore(S3ObjectStore, Spool)
    ManifestStore(store)         ->  runs/<run_id>/manifest.json
    MapStore(store)              ->  maps/<package>/<version>/map.json (app maps)
    RunEventPublisher(redis, store) / RunEventReader(redis) / iter_replay(store, run_id)
    Fences(redis), FencedObjectStore(store, fences, scope, token)  ->  one writer per run, sub-task

Tests of other packages use :class:`FakeObjectStore` (in memory, can fail on demand).
"""

from __future__ import annotations

from storage.errors import (
    EventStreamError,
    ManifestError,
    MapFormatError,
    ObjectNotFoundError,
    SpoolError,
    StaleWriterError,
    StorageError,
    StoreAccessError,
    StoreUnavailableError,
)
from storage.events import (
    RunEventPublisher,
    RunEventReader,
    decode_stream_entry,
    iter_replay,
)
from storage.fake import FakeObjectStore
from storage.fences import FencedObjectStore, Fences, run_scope, subtask_scope
from storage.keys import RunKeys, route_memory_key, stream_key
from storage.manifests import ManifestStore
from storage.maps import MapStore, map_key, map_screen_key
from storage.objects import ObjectInfo, ObjectStore, guess_content_type
from storage.s3 import S3ObjectStore
from storage.spool import Spool, SpoolingObjectStore, SpoolUsage
from storage.stores import open_object_store, read_spool_usage

__all__ = [
    "EventStreamError",
    "FakeObjectStore",
    "FencedObjectStore",
    "Fences",
    "ManifestError",
    "ManifestStore",
    "MapFormatError",
    "MapStore",
    "ObjectInfo",
    "ObjectNotFoundError",
    "ObjectStore",
    "RunEventPublisher",
    "RunEventReader",
    "RunKeys",
    "S3ObjectStore",
    "Spool",
    "SpoolError",
    "SpoolUsage",
    "SpoolingObjectStore",
    "StaleWriterError",
    "StorageError",
    "StoreAccessError",
    "StoreUnavailableError",
    "decode_stream_entry",
    "guess_content_type",
    "iter_replay",
    "map_key",
    "map_screen_key",
    "open_object_store",
    "read_spool_usage",
    "route_memory_key",
    "run_scope",
    "stream_key",
    "subtask_scope",
]
