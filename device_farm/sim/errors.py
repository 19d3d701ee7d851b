"""Errors of the virtual phones (device_farm.sim).

    DroidRetrieverError                 core.errors
     +-- SimError                       anything the simulator refuses or cannot do
          +-- AppSpecError              an app YAML file is invalid (names the file and field)
          +-- SimServerError            the ADB server cannot start, or was stopped
          +-- ControlError              a control request failed (unknown phone, snapshot, ...)
          +-- ShellCommandError         a shell command is malformed; its text is what
                                        the shell prints (the phone answers, never hangs)

Protocol-level faults the simulator injects on purpose (dropped connections,
freezes) are not exceptions here: clients see them exactly as a real adb
server would show them (``adbutils.AdbError`` / timeouts).
"""

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = ["AppSpecError", "ControlError", "ShellCommandError", "SimError", "SimServerError"]


class SimError(DroidRetrieverError):
    """Root of the simulator's errors."""


class AppSpecError(SimError):
    """An app spec (YAML) is invalid; the message names the file and the bad field."""


class SimServerError(SimError):
    """The simulated ADB server could not start or is not running."""


class ControlError(SimError):
    """A control request (fault, reset, clock, login) was refused."""


class ShellCommandError(SimError):
    """A shell command cannot run; ``str(error)`` is the shell's own error line."""
