"""What the API talks to, built once per process from the settings: clients and the verbs on them.

Routes get it with ``Depends(get_context)``; nothing here is module-global, so
tests build as many apps (on as many test services) as they like.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import redis
import redis.asyncio as aioredis
from fastapi import Request

from core.config import Settings
from core.models import InstalledApp
from core.redis_client import open_redis
from deploy.local import ensure_api_token
from device_farm.registry import DeviceRegistry
from droidretriever.api.live import LiveScreens
from flows.pause_queue import PauseQueue
from flows.pauses import resume_run
from flows.steering import Steering
from storage import ManifestStore, MapStore, ObjectStore, RunEventPublisher, open_object_store
from tasks.takeover import InterventionRecorder

__all__ = ["ApiContext", "get_context", "open_context"]


@dataclass
class ApiContext:
    """The API process's clients and the verbs the routes share."""

    settings: Settings
    token: str
    redis: redis.Redis[bytes]
    aredis: aioredis.Redis[bytes]
    store: ObjectStore
    manifests: ManifestStore
    maps: MapStore
    events: RunEventPublisher
    registry: DeviceRegistry
    pauses: PauseQueue
    steering: Steering
    recorder: InterventionRecorder
    live: LiveScreens
    secure_cookies: bool = field(default=False)

    def installed_apps(self) -> tuple[InstalledApp, ...]:
        """The apps of the farm's online phones; none when Redis does not answer (not known: a
        run asked now finds out itself)."""
        try:
            return self.registry.installed_apps()
        except redis.RedisError:
            return ()

    def close(self) -> None:
        """Stop the live screens and flush what was published."""
        self.live.close()
        self.events.close()


def open_context(settings: Settings) -> ApiContext:
    """Clients for ``settings``; the API token is generated if the stack never made one."""
    client = open_redis(settings.redis)
    store = open_object_store(settings)
    # A person's actions are rare and each worth keeping at once: one segment per event.
    events = RunEventPublisher(client, store, flush_every=1)
    registry = DeviceRegistry.from_settings(settings)
    manifests = ManifestStore(store)

    def resume(run_id: str, action: str, note: str, app: str | None) -> list[str]:
        return resume_run(run_id, "skip" if action == "skip" else "continue", note, app,
                          settings=settings)

    return ApiContext(
        settings=settings, token=ensure_api_token(settings), redis=client,
        # Live streams block up to 15 s per read (droidretriever.api.events): wait longer than that.
        aredis=aioredis.Redis.from_url(settings.redis.url, socket_connect_timeout=2.0,
                                       socket_timeout=30.0),
        store=store, manifests=manifests, maps=MapStore(store), events=events, registry=registry,
        pauses=PauseQueue(client),
        steering=Steering(client, registry, manifests, events, resume),
        recorder=InterventionRecorder(store, events, client),
        live=LiveScreens(registry, fps=settings.api.live_fps),
        secure_cookies=settings.api.base_url.startswith("https://"),
    )


def get_context(request: Request) -> ApiContext:
    """The app's context (a FastAPI dependency)."""
    context: ApiContext = request.app.state.context
    return context
