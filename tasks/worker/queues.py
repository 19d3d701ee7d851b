"""The farm's Celery queues: one per phone and one per installed app.

A phone's worker consumes ``device.<serial>`` (this phone, e.g. to resume a
paused run) and ``app.<package>`` for every app installed on it (any free
phone with the app); senders route a sub-task to one of them.
"""

from __future__ import annotations

__all__ = ["app_queue", "device_queue"]


def device_queue(serial: str) -> str:
    """The queue only this phone's worker consumes."""
    return f"device.{serial}"


def app_queue(package: str) -> str:
    """The queue every phone with ``package`` installed consumes."""
    return f"app.{package}"
