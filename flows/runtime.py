"""What a flow process talks to: object store, manifests, events, the farm; built from settings.

Flow and task parameters stay plain JSON (Prefect sends them to its API), so
the clients are not parameters: each process builds them once from
``load_settings()`` (:func:`open_services`) and reuses them across runs. The
manifest of a run is written only by its flow process, which keeps it in
memory and writes it whole on every change (never reading the store first, so
a store that is down only sends the write to the spool); sub-flows of parallel
apps share one lock so their changes do not interleave. Its writes carry a fencing
token (:mod:`storage.fences`, scope ``run:<run_id>``): once another process has
ended the run (a stop, the crash sweep) and sealed it, they are refused.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from celery import Celery

from core.config import Settings
from core.models import RunEvent, RunEventKind, RunManifest, RunStatus, SubTaskStatus
from core.redis_client import open_redis
from device_farm.registry import DeviceRegistry
from storage import (
    Fences,
    ManifestStore,
    ObjectStore,
    RunEventPublisher,
    StaleWriterError,
    StorageError,
    open_object_store,
    run_scope,
)
from tasks.worker import FarmClient, create_celery_app

__all__ = ["FlowServices", "open_services", "use_prefect_server"]

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
        self.registry = DeviceRegistry.from_settings(settings)
        self.farm = FarmClient(self.celery, self.registry)
        self.fences = Fences(self.redis)
        self._manifest_lock = threading.Lock()
        self._manifests: dict[str, RunManifest] = {}  # runs this process owns, as last written
        self._tokens: dict[str, int] = {}  # their fencing tokens
        self._sealed: set[str] = set()  # runs ended from outside their flow: never written again

    def publish(self, run_id: str, kind: RunEventKind, **attachments: object) -> None:
        """Publish a live event; a failing event stream is logged, the run goes on."""
        try:
            self.events.publish(RunEvent.model_validate({"run_id": run_id, "kind": kind,
                                                         **attachments}))
        except StorageError as exc:
            # Events feed live views; the manifest is the record and is written regardless.
            log.warning("could not publish %s for run %s: %s", kind.value, run_id, exc)

    def start_manifest(self, manifest: RunManifest) -> RunManifest:
        """Write a new run's manifest and keep it: this process owns the run from now on."""
        with self._manifest_lock:
            self._tokens[manifest.run_id] = self.fences.grant(run_scope(manifest.run_id))
            written = self._manifests[manifest.run_id] = self.manifests.write(manifest)
            return written

    def update_manifest(self, run_id: str,
                        change: Callable[[RunManifest], RunManifest]) -> RunManifest:
        """Change the run's manifest and write it whole, under this process's lock.

        A run this process owns is changed from the copy it keeps (no read); any
        other run (a resume, a crashed run's sweep) is read from the store first.
        Raises :class:`~storage.StaleWriterError` once the run has been ended from
        outside its flow (:meth:`end_run` with ``seal``, here or in another process).
        """
        with self._manifest_lock:
            return self._update_locked(run_id, change)

    def _update_locked(self, run_id: str,
                       change: Callable[[RunManifest], RunManifest]) -> RunManifest:
        scope = run_scope(run_id)
        if run_id in self._sealed:
            raise StaleWriterError(scope, self._tokens.get(run_id, 0), self.fences.latest(scope))
        token = self._tokens.get(run_id)
        if token is not None:
            self.fences.check(scope, token)
        current = self._manifests.get(run_id) or self.manifests.read(run_id)
        written = self.manifests.apply(current, change)
        if run_id in self._manifests:
            self._manifests[run_id] = written
        return written

    def end_run(self, run_id: str, status: RunStatus, reason: str, *, seal: bool = False) -> None:
        """Record that the run ended (``failed``, ``stopped``, ``crashed``) and why: manifest, events.

        Sub-tasks still ``running`` in the manifest become ``failed``: nothing runs
        them any more. A manifest that cannot be written (none was, the store is
        broken) is logged; the reason still goes out as an ``error`` event.

        ``seal``: the run is ended from outside its flow (a stop, the crash sweep). A
        new fencing token is granted first, under the manifest lock, so the flow's own
        writes (a write of this process already under way lands before; none after, nor
        any of a frozen process that owned it) are refused from then on, and this is
        the run's last word. An end of a run already sealed here is dropped.
        """
        def end(manifest: RunManifest) -> RunManifest:
            subtasks = {sid: SubTaskStatus.FAILED if sub is SubTaskStatus.RUNNING else sub
                        for sid, sub in manifest.subtasks.items()}
            return manifest.model_copy(update={"status": status, "error": reason,
                                               "subtasks": subtasks})

        with self._manifest_lock:
            if run_id in self._sealed:
                log.info("run %s already ended; not %s", run_id, status.value)
                return
            try:
                if seal:
                    kept = self._manifests.pop(run_id, None)
                    self._tokens[run_id] = self.fences.grant(run_scope(run_id))
                    self.manifests.apply(kept or self.manifests.read(run_id), end)
                else:
                    self._update_locked(run_id, end)
            except StorageError as exc:
                log.warning("could not record in its manifest that run %s %s: %s", run_id,
                            status.value, exc)
            finally:
                if seal:
                    self._sealed.add(run_id)
        self.publish(run_id, RunEventKind.ERROR, message=reason)
        self.publish(run_id, RunEventKind.RUN_FINISHED, message=status.value)

    def kept_manifest(self, run_id: str) -> RunManifest | None:
        """The manifest of a run this process owns, as last written (None for any other run)."""
        with self._manifest_lock:
            return self._manifests.get(run_id)

    def finish_manifest(self, run_id: str) -> None:
        """Forget the copy of a run that has ended (its last write is in the store)."""
        with self._manifest_lock:
            self._manifests.pop(run_id, None)
            if run_id not in self._sealed:
                self._tokens.pop(run_id, None)


@contextmanager
def use_prefect_server(settings: Settings) -> Iterator[None]:
    """Run Prefect code in this process against ``settings.prefect``, riding out its restarts.

    The same settings :meth:`~core.config.PrefectSettings.client_env` gives a
    child process: the server's URL and credentials, never a temporary server, and enough client
    retries (Prefect's own, with backoff and jitter) to wait out ``retry_window_s``.
    """
    from prefect.settings import (
        PREFECT_API_AUTH_STRING,
        PREFECT_API_URL,
        PREFECT_CLIENT_MAX_RETRIES,
        PREFECT_SERVER_ALLOW_EPHEMERAL_MODE,
        temporary_settings,
    )

    auth = settings.prefect.auth_string
    with temporary_settings({
        PREFECT_API_URL: str(settings.prefect.api_url).rstrip("/"),
        PREFECT_API_AUTH_STRING: auth.get_secret_value() if auth is not None else None,
        PREFECT_CLIENT_MAX_RETRIES: settings.prefect.client_max_retries,
        PREFECT_SERVER_ALLOW_EPHEMERAL_MODE: False,
    }):
        yield


def open_services(settings: Settings) -> FlowServices:
    """The process's services for ``settings`` (built on first use, then shared)."""
    key = settings.model_dump_json()
    with _CACHE_LOCK:
        services = _CACHE.get(key)
        if services is None:
            services = _CACHE[key] = FlowServices(settings)
        return services

