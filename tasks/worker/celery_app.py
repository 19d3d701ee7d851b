"""The Celery app: Redis broker and backend, JSON only, one sub-task at a time per phone.

Routing: see :mod:`tasks.worker.queues`. ``acks_late`` + ``reject_on_worker_lost`` +
prefetch 1 mean a sub-task is acknowledged only when it finished, so one on a
worker that dies is delivered again to another phone with the app (the farm
monitor puts it back at once; the broker's visibility timeout is the
fallback). The app is built from settings, never at import time.
"""

from __future__ import annotations

from celery import Celery

from droidretriever.config import Settings
from tasks.worker.device_tasks import register_device_tasks

__all__ = ["DEVICE_TASK_MODULES", "create_celery_app"]

# Modules that define device-bound tasks (``@device_task``); a worker imports them all.
DEVICE_TASK_MODULES: tuple[str, ...] = ("tasks.worker.farm_tasks", "tasks.navigate.task")


def create_celery_app(settings: Settings, *, main: str = "droidretriever") -> Celery:
    """A Celery app on ``settings.redis.url`` with the farm's delivery guarantees."""
    app = Celery(main, broker=settings.redis.url, backend=settings.redis.url,
                 set_as_current=False)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        worker_concurrency=1,
        task_create_missing_queues=True,
        task_default_queue="farm.default",
        task_track_started=True,
        result_expires=24 * 3600,
        result_extended=True,
        broker_transport_options={
            "visibility_timeout": settings.farm.visibility_timeout_s,
            # Redis gives no ordering across queues; round-robin keeps app.* fair.
            "fanout_prefix": True,
            "fanout_patterns": True,
        },
        result_backend_transport_options={"retry_policy": {"timeout": 5.0}},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # a restarted Redis is waited for, forever
        broker_connection_timeout=3.0,
        redis_socket_connect_timeout=3.0,
        redis_retry_on_timeout=True,
        redis_backend_health_check_interval=10,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        worker_enable_remote_control=True,
        imports=DEVICE_TASK_MODULES,
    )
    # Registering here (not by import side effect) keeps each app independent.
    for module in DEVICE_TASK_MODULES:
        __import__(module)
    register_device_tasks(app)
    return app
