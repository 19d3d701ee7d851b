"""What a flow process talks to: object store, manifests, events, the farm; built from settings.

Flow and task parameters stay plain JSON (Prefect sends them to its API), so
the clients are not parameters: each process builds them once from
``load_settings()`` (:func:`open_services`) and reuses them across runs. The
manifest of a run is written only by its flow process; sub-flows of parallel
apps share one lock so their read-modify-writes do not interleave.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import redis
from celery import Celery

from device_farm.registry import DeviceRegistry
from droidretriever.config import Settings
from droidretriever.models import RunEvent, RunEventKind, RunManifest
from storage import (
    ManifestStore,
    ObjectStore,
    RunEventPublisher,
    StorageError,
    open_object_store,
    open_redis,
)
from tasks.worker import FarmClient, create_celery_app

__all__ = ["FlowServices", "open_services"]

log = logging.getLogger(__name__)

_CACHE: dict[str, FlowServices] = {}
_CACHE_LOCK = threading.Lock()


class FlowServices:
    """The clients one flow process needs, and the run-record verbs built on them."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store: ObjectStore = open_object_store(settings)
        self.redis: redis.Redis[bytes] = open_redis(settings.redis)
        self.events = RunEventPublisher(self.redis, self.store)
        self.manifests = ManifestStore(self.store)
        self.celery: Celery = create_celery_app(settings)
        self.farm = FarmClient(self.celery)
        self.registry = DeviceRegistry.from_settings(settings)
        self._manifest_lock = threading.Lock()

    def publish(self, run_id: str, kind: RunEventKind, **attachments: object) -> None:
        """Publish a live event; a failing event stream is logged, the run goes on."""
        try:
            self.events.publish(RunEvent.model_validate({"run_id": run_id, "kind": kind,
                                                         **attachments}))
        except StorageError as exc:
            # Events feed live views; the manifest is the record and is written regardless.
            log.warning("could not publish %s for run %s: %s", kind.value, run_id, exc)

    def update_manifest(self, run_id: str,
                        change: Callable[[RunManifest], RunManifest]) -> RunManifest:
        """Read-modify-write the run's manifest under this process's lock."""
        with self._manifest_lock:
            return self.manifests.update(run_id, change)


def open_services(settings: Settings) -> FlowServices:
    """The process's services for ``settings`` (built on first use, then shared)."""
    key = settings.model_dump_json()
    with _CACHE_LOCK:
        services = _CACHE.get(key)
        if services is None:
            services = _CACHE[key] = FlowServices(settings)
        return services

