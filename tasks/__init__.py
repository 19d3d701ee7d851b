"""The retryable units as plain functions, with thin Celery wrappers, one package per feature.

- :mod:`tasks.navigate`   the UI copilot loop for one sub-task on one phone (``copilot.navigate``);
- :mod:`tasks.capture`    scrolling capture and stitching;
- :mod:`tasks.synthesis`  the grounded report;
- :mod:`tasks.worker`     the Celery app, one worker per phone, the farm client and monitor;
- :mod:`tasks.control`    a person's commands to a running sub-task;
- :mod:`tasks.run_steps`  the run's non-device steps (transcribe, plan, report);
- :mod:`tasks.keys`       the Redis keys this layer owns; :mod:`tasks.errors` its error tree.

Nothing is imported here: import from the feature packages.
"""

__all__: list[str] = []
