"""Errors of the device farm.

    DroidRetrieverError                    core.errors
     +-- DeviceError                       anything a phone, its driver or the farm reports
          +-- DeviceLost                   the phone (or the adb server behind it) is gone
          +-- DeviceTimeout                the phone did not answer in time
          +-- DeviceBusy                   leased by another run / no free phone has the app
          +-- DeviceCommandFailed          a shell command ran and failed (bad package, ...)
          +-- InputNotApplied              typed text did not land in the focused field
          +-- DeviceQuarantined            the phone failed health checks; its worker paused
          +-- FarmSetupError               a farm process, the SDK or adb cannot be started

Adapters (``adb_driver``, ``u2_driver``) translate adbutils / uiautomator2 /
socket errors into this tree once, at the boundary, and re-raise ``from exc``.
Every error carries the serial it concerns (empty when none) and a hint.
"""

# The issue names these errors (DeviceLost, DeviceTimeout, ...); they read better without "Error".
# ruff: noqa: N818

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = [
    "DeviceBusy",
    "DeviceCommandFailed",
    "DeviceError",
    "DeviceLost",
    "DeviceQuarantined",
    "DeviceTimeout",
    "FarmSetupError",
    "InputNotApplied",
]


class DeviceError(DroidRetrieverError):
    """Base class of the farm's errors; ``serial`` names the phone concerned."""

    def __init__(self, message: str, *, serial: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.serial = serial


class DeviceLost(DeviceError):
    """The phone or its adb connection went away (unplugged, adb restarted, sim dropped)."""

    hint = "check the cable or Wi-Fi adb connection (`adb devices`), then `droidretriever farm status`"


class DeviceTimeout(DeviceError):
    """The phone did not answer within the driver's timeout."""

    hint = "the phone may be frozen or overloaded; it is quarantined and rejoins when it answers"


class DeviceBusy(DeviceError):
    """The phone is leased by another run, or no free phone has the app."""

    hint = "wait for the other run to finish, or add a phone with the app to the farm"


class DeviceCommandFailed(DeviceError):
    """A shell command ran on the phone and reported failure."""


class InputNotApplied(DeviceError):
    """Text was sent but the focused field does not show it afterwards."""

    hint = (
        "install ADB Keyboard (com.android.adbkeyboard) and select it as the input method "
        "for non-ASCII text, or use the uiautomator2 driver"
    )


class DeviceQuarantined(DeviceError):
    """The phone failed its health checks; its worker stopped taking sub-tasks."""

    hint = "`droidretriever farm status` says why; the phone rejoins once it answers again"


class FarmSetupError(DeviceError):
    """A farm process (virtual phones, worker, emulator, adb) could not be started."""
