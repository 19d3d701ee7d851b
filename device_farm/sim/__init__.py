"""Virtual Android phones behind a real ADB-protocol server (the project's local emulator).

    from device_farm.sim import SimServer
    with SimServer(phones=2, port=0, seed=7) as sim:
        client = adbutils.AdbClient("127.0.0.1", sim.port)
        sim.control.network_error(sim.serials[0], "com.sankuai.meituan")

Apps are YAML specs in ``apps/`` (format: ``README.md`` next to this file);
DroidBot recordings of real apps are replayed as installed apps (``replay/``).
"""

from __future__ import annotations

from device_farm.sim.catalog import APPS_DIR, Catalog, load_app, load_catalog
from device_farm.sim.control import ControlReply, ControlRequest, PhoneStatus, SimControlClient
from device_farm.sim.errors import (
    AppSpecError,
    ControlError,
    ShellCommandError,
    SimError,
    SimServerError,
)
from device_farm.sim.farm import LATENCY_PROFILES, Latency, serial_for
from device_farm.sim.replay import Outcome, ReplayApp, ReplayStep, load_recordings
from device_farm.sim.server import SimServer
from device_farm.sim.spec import AppSpec

__all__ = [
    "APPS_DIR",
    "LATENCY_PROFILES",
    "AppSpec",
    "AppSpecError",
    "Catalog",
    "ControlError",
    "ControlReply",
    "ControlRequest",
    "Latency",
    "Outcome",
    "PhoneStatus",
    "ReplayApp",
    "ReplayStep",
    "ShellCommandError",
    "SimControlClient",
    "SimError",
    "SimServer",
    "SimServerError",
    "load_app",
    "load_catalog",
    "load_recordings",
    "serial_for",
]
