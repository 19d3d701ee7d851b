"""App maps, built: explore an app on a farm phone (:class:`MapBuilder`) and store it.

Reading a map (matching a question, paths) is :mod:`inference.maps`; the
Celery task that builds one on a worker's phone is :mod:`tasks.mapping.task`.
"""

from __future__ import annotations

from tasks.mapping.builder import MapBuilder, choose_probe

__all__ = ["MapBuilder", "choose_probe"]
