"""The device farm's processes: phones (virtual, adb-attached, emulators), a worker each, a monitor.

- :mod:`deploy.farm.launcher`   ``farm up | down``: start and stop them, wait for the workers;
- :mod:`deploy.farm.processes`  the farm's folder, its manifest (``farm.json``), many stopped at once;
- :mod:`deploy.farm.ocr`        the host's shared OCR service, when the workers ask one;
- :mod:`deploy.farm.summary`    the farm in one line for ``droidretriever up | status``;
- :mod:`deploy.farm.monitor`    the monitor ``farm up`` runs: it also starts dead workers again.

They sit beside the local stack (:mod:`deploy.local`), whose process records they
use; :mod:`device_farm` keeps what runs inside them (drivers, registry, leases,
health, the simulator).
"""

from __future__ import annotations

from deploy.farm.launcher import (
    bring_down,
    bring_up_adb,
    bring_up_emulators,
    bring_up_sim,
    ensure_sim_farm,
    repair_farm,
    running_farm,
    wait_for_workers,
    worker_process_name,
)
from deploy.farm.ocr import OCR_PROCESS, shared_ocr_engine, start_shared_ocr, worker_ocr_args
from deploy.farm.processes import (
    FarmManifest,
    ProcessRecord,
    farm_dir,
    is_running,
    read_manifest,
    start_process,
    stop_process,
    stop_processes,
    write_manifest,
)
from deploy.farm.summary import FarmSummary, summarize_farm

__all__ = [
    "OCR_PROCESS",
    "FarmManifest",
    "FarmSummary",
    "ProcessRecord",
    "bring_down",
    "bring_up_adb",
    "bring_up_emulators",
    "bring_up_sim",
    "ensure_sim_farm",
    "farm_dir",
    "is_running",
    "read_manifest",
    "repair_farm",
    "running_farm",
    "shared_ocr_engine",
    "start_process",
    "start_shared_ocr",
    "stop_process",
    "stop_processes",
    "summarize_farm",
    "wait_for_workers",
    "worker_ocr_args",
    "worker_process_name",
    "write_manifest",
]
