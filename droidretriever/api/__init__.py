"""The HTTP API and the dashboard: ask, watch and steer the farm from a browser or a program.

    create_app(settings)        the FastAPI app (``python -m droidretriever.api`` serves it)

One module per resource: ``runs`` (ask, list, a run), ``evidence`` (report,
captures, crops, step screens), ``events`` (server-sent events: a run's, the
pause queue's), ``control`` (steering and the pause queue), ``devices`` (phones,
screen, live view, remote input), ``maps`` (the stored app maps), ``subscriptions``,
``pages`` (dashboard, login, health, schema); ``auth`` says who calls, ``live``
captures the live views, ``uploads`` limits bodies. What is not HTTP lives
below: steering in :mod:`flows.steering`, the pause queue in
:mod:`flows.pause_queue`, remote input in :mod:`tasks.takeover`, runs in
:mod:`flows.runner`, app maps in :mod:`storage.maps`.
"""

from __future__ import annotations

from droidretriever.api.app import create_app

__all__ = ["create_app"]
