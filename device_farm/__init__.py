"""The device farm: drivers, registry and leases (Redis keys in ``keys.py``), health, virtual phones.

Public surface (heavier adapters are imported from their modules:
``device_farm.adb_driver.AdbDriver``, ``device_farm.u2_driver.U2Driver``,
``device_farm.adb_shell.PhoneShell``, ``device_farm.registry.DeviceRegistry``).
The processes a farm runs as (phones, workers, monitor) are started by
:mod:`deploy.farm`; the virtual phones (:mod:`device_farm.sim`) are a test
double that no product module imports.
"""

from __future__ import annotations

from device_farm.driver import Driver, plan_scroll
from device_farm.errors import (
    DeviceBusy,
    DeviceCommandFailed,
    DeviceError,
    DeviceLost,
    DeviceQuarantined,
    DeviceTimeout,
    FarmSetupError,
    InputNotApplied,
)
from device_farm.models import (
    DeviceInfo,
    DeviceObservation,
    DeviceState,
    DeviceStatus,
    InflightTask,
    Key,
    ObserveTimings,
    TextEntry,
)

__all__ = [
    "DeviceBusy",
    "DeviceCommandFailed",
    "DeviceError",
    "DeviceInfo",
    "DeviceLost",
    "DeviceObservation",
    "DeviceQuarantined",
    "DeviceState",
    "DeviceStatus",
    "DeviceTimeout",
    "Driver",
    "FarmSetupError",
    "InflightTask",
    "InputNotApplied",
    "Key",
    "ObserveTimings",
    "TextEntry",
    "plan_scroll",
]
