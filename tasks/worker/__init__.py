"""The farm's Celery side: one worker process per phone, the app it runs, and how to reach it.

- :mod:`tasks.worker.queues`        ``device.<serial>`` and ``app.<package>``;
- :mod:`tasks.worker.celery_app`    the Celery app factory (delivery guarantees, task modules);
- :mod:`tasks.worker.device_tasks`  ``@device_task``: plain functions given the worker's phone;
- :mod:`tasks.worker.bound_device`  the phone a worker serves: lease, heartbeat, health;
- :mod:`tasks.worker.device_worker` ``python -m tasks.worker.device_worker --serial S``;
- :mod:`tasks.worker.farm_client`   send device tasks, read typed results;
- :mod:`tasks.worker.farm_monitor`  ``python -m tasks.worker.farm_monitor``: redeliver a dead worker's task;
- :mod:`tasks.worker.farm_tasks`    ``farm.diagnose`` and ``farm.synthetic`` (checks, benchmarks).

The two entry-point modules and the task modules are imported by name, not from here.
"""

from __future__ import annotations

from tasks.worker.bound_device import BoundDevice, bind_device, bound_device, unbind_device
from tasks.worker.celery_app import DEVICE_TASK_MODULES, create_celery_app
from tasks.worker.device_tasks import (
    DeviceTaskSpec,
    device_task,
    iter_device_tasks,
    register_device_tasks,
)
from tasks.worker.farm_client import FarmClient, PendingResult
from tasks.worker.queues import app_queue, device_queue

__all__ = [
    "DEVICE_TASK_MODULES",
    "BoundDevice",
    "DeviceTaskSpec",
    "FarmClient",
    "PendingResult",
    "app_queue",
    "bind_device",
    "bound_device",
    "create_celery_app",
    "device_queue",
    "device_task",
    "iter_device_tasks",
    "register_device_tasks",
    "unbind_device",
]
