"""The Celery app: Redis broker and backend, JSON only, one sub-task at a time per phone.

Routing: see :mod:`tasks.worker.queues`. ``acks_late`` + prefetch 1 mean a
sub-task is acknowledged only when it finished (acking on receipt or on start
would lose the message of a worker that dies mid-task). The solo pool runs the
task in the worker process itself, so a worker that dies cannot reject its
message (``reject_on_worker_lost`` covers a pool child only): the broker gets
it back. Two ways, whichever comes first:

- the farm monitor puts a dead worker's in-flight sub-task back once its
  heartbeat is missing (it knows the sub-task from the in-flight record the
  task writes first);
- the broker's visibility timeout, ``farm.visibility_timeout_s`` (30 s): every
  worker sweeps ``unacked`` each few seconds and requeues a message nobody
  kept visible for that long. Each worker's heartbeat keeps the messages it
  holds visible (:mod:`tasks.worker.deliveries`), so a long or paused sub-task
  is never handed out twice while its worker lives, and one whose worker died
  before the task's first line (no in-flight record yet) comes back within
  the timeout plus a sweep, not hours.

The app is built from settings, never at import time.

A Redis restart is Celery's own transient fault, retried inside Celery, once
(docs/architecture.md "Faults"): workers reconnect to the broker forever; storing a result,
publishing a message and the result wait's reconnection retry with backoff for
``redis.retry_window_s`` (:func:`redis_retry_policy`), so a restart of up to a
minute is ridden out instead of losing a result or failing the wait.
"""

from __future__ import annotations

from celery import Celery

from core.config import Settings
from tasks.worker.device_tasks import register_device_tasks

__all__ = ["DEVICE_TASK_MODULES", "create_celery_app", "redis_retry_policy", "restore_interval_s"]

# Modules that define device-bound tasks (``@device_task``); a worker imports them all.
DEVICE_TASK_MODULES: tuple[str, ...] = ("tasks.worker.farm_tasks", "tasks.navigate.task", "tasks.mapping.task")


_RETRY_START_S, _RETRY_STEP_S, _RETRY_MAX_S = 0.1, 0.5, 3.0


def redis_retry_policy(window_s: float) -> dict[str, float | int | None]:
    """kombu's ``retry_over_time`` policy that keeps trying for at least ``window_s``.

    Waits grow by half a second up to 3 s between tries; the count is what adds up
    to the window (``publish`` knows counts only), and ``timeout`` stops the rest.
    """
    retries, waited, wait = 0, 0.0, _RETRY_START_S
    while waited < window_s:
        retries, waited, wait = retries + 1, waited + wait, min(_RETRY_MAX_S, wait + _RETRY_STEP_S)
    return {"max_retries": retries, "interval_start": _RETRY_START_S,
            "interval_step": _RETRY_STEP_S, "interval_max": _RETRY_MAX_S,
            "timeout": window_s or None}


def restore_interval_s(visibility_timeout_s: float) -> float:
    """How often a worker sweeps for messages nobody kept visible: a fifth of the timeout, 1-10 s."""
    return min(10.0, max(1.0, visibility_timeout_s / 5))


def create_celery_app(settings: Settings, *, main: str = "droidretriever") -> Celery:
    """A Celery app on ``settings.redis.url`` with the farm's delivery guarantees."""
    app = Celery(main, broker=settings.redis.url, backend=settings.redis.url,
                 set_as_current=False)
    retry = redis_retry_policy(settings.redis.retry_window_s)
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
        # No STARTED state: a delivery that comes back reads the stored state to tell
        # whether its task already ended (tasks.worker.device_tasks.find_repeat_delivery).
        task_track_started=False,
        result_expires=24 * 3600,
        result_extended=True,
        broker_transport_options={
            "visibility_timeout": settings.farm.visibility_timeout_s,
            # Sweep for messages of dead workers often enough that they come back in seconds.
            "unacked_restore_interval": restore_interval_s(settings.farm.visibility_timeout_s),
            "unacked_restore_throttle": 1,
            # Redis gives no ordering across queues; round-robin keeps app.* fair.
            "fanout_prefix": True,
            "fanout_patterns": True,
        },
        # Storing a result and reconnecting the result wait ride out a Redis restart.
        result_backend_transport_options={"retry_policy": retry},
        task_publish_retry_policy={k: v for k, v in retry.items() if k != "timeout"},
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
