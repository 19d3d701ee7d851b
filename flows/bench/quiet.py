"""A benchmark's runs send Prefect their warnings and errors, not the engine's INFO lines.

    with quiet_prefect_logs():      # in the ``bench`` flow, around its queue
        ...                         # runs started here (and in threads copying this context)

Prefect's engine logs a few INFO lines per flow and task run ("Beginning subflow run",
"Finished in state Completed()"), each a row the server writes while every phone's run
writes its states too. A suite's results say per task what those lines say, so runs started
under this context send the API only WARNING and above; the console still shows everything.
Scoped by a context variable: other flows in the same process are untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["quiet_prefect_logs"]

_QUIET: ContextVar[bool] = ContextVar("bench_quiet_prefect_logs", default=False)
_RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs", "prefect.extra")


class _OnlyWarningsWhenQuiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not _QUIET.get()


_FILTER = _OnlyWarningsWhenQuiet()


@contextmanager
def quiet_prefect_logs() -> Iterator[None]:
    """Runs started in this context send Prefect's API their WARNING lines and above only."""
    from prefect.logging.handlers import APILogHandler

    for name in _RUN_LOGGERS:
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, APILogHandler) and _FILTER not in handler.filters:
                handler.addFilter(_FILTER)
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)
