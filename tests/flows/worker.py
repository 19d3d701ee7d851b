"""A device worker that also serves ``probe.navigate`` and the ``test.login_gate`` double.

``python -m tests.flows.worker --serial S ...`` = ``python -m tasks.worker.device_worker`` plus the probe.
"""

from __future__ import annotations

import tasks.navigate.probe  # noqa: F401  (registers probe.navigate before the app is built)
import tests.flows.login_gate  # noqa: F401  (the login-gate test double)
from tasks.worker.device_worker import main

if __name__ == "__main__":
    main()
