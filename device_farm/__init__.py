"""The device farm: drivers, registry and leases, health, farm processes, virtual phones.

Public surface (heavier adapters are imported from their modules:
``device_farm.adb_driver.AdbDriver``, ``device_farm.u2_driver.U2Driver``,
``device_farm.adb_shell.PhoneShell``, ``device_farm.registry.DeviceRegistry``,
``device_farm.launcher``, ``device_farm.summary``):
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
    AppInfo,
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
    "AppInfo",
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
