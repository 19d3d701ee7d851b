"""A device worker that stops before its first task's first line, for the redelivery test.

``python -m tests.tasks.worker.held_worker --serial S ...`` = ``python -m tasks.worker.device_worker``
plus a ``task_prerun`` hook (a test double): when ``DROIDRETRIEVER_TEST_HOLD_MARKER`` names a
file that does not exist yet, the first task this worker receives writes its id there and
waits (the worker still beats) until the test kills the worker: received, never started.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from celery.signals import task_prerun

from tasks.worker.device_worker import main

MARKER_ENV = "DROIDRETRIEVER_TEST_HOLD_MARKER"


def hold_before_first_line(task_id: str | None = None, **_: Any) -> None:
    marker = Path(os.environ[MARKER_ENV])
    if marker.exists():
        return
    marker.write_text(str(task_id))
    while True:  # until SIGKILL
        time.sleep(1.0)


if __name__ == "__main__":
    task_prerun.connect(hold_before_first_line, weak=False)
    main()
