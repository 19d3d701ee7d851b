"""The adbutils boundary: a client that never spawns adb, and error translation.

adbutils' stock client runs ``adb start-server`` whenever a connection is
refused, which would start a real adb server (for up to 20 s) each time a
virtual phone drops its connection; here a refused connection is simply
:class:`DeviceLost`. The server version is cached because adbutils asks for it
on every transport it opens (one extra round trip per shell command).
Every adbutils / socket exception is translated in :func:`translate_adb_errors`.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import adbutils
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from device_farm.errors import DeviceCommandFailed, DeviceError, DeviceLost, DeviceTimeout

__all__ = [
    "AdbDeviceEntry",
    "NoSpawnAdbClient",
    "list_adb_devices",
    "parse_focus",
    "parse_wm_size",
    "translate_adb_errors",
]

_LOST_MARKERS = (
    "not found",
    "offline",
    "closed",
    "unauthorized",
    "connection reset",
    "broken pipe",
    "no devices",
    "unknown data: b''",  # check_okay read nothing: the server closed the socket
)


class _NoSpawnConnection(adbutils.AdbConnection):  # type: ignore[misc]
    def _safe_connect(self) -> socket.socket:
        # Fail fast instead of launching `adb start-server`; see the module docstring.
        return self._create_socket()  # type: ignore[no-any-return]


class NoSpawnAdbClient(adbutils.AdbClient):  # type: ignore[misc]
    """An ``AdbClient`` for one adb server (real adb or the virtual phones) that never spawns adb."""

    def __init__(self, host: str, port: int, socket_timeout: float | None = 30.0) -> None:
        super().__init__(host=host, port=port, socket_timeout=socket_timeout)
        self._timeout = socket_timeout
        self._version: int | None = None

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        try:
            conn = _NoSpawnConnection(self.host, self.port)
        except TimeoutError as exc:
            raise AdbTimeout(f"connect to adb server {self.host}:{self.port} timed out") from exc
        effective = timeout or self._timeout
        if effective:
            conn.conn.settimeout(effective)
        return conn

    def server_version(self) -> int:
        if self._version is None:
            self._version = int(super().server_version())
        return self._version


@contextmanager
def translate_adb_errors(serial: str, action: str) -> Iterator[None]:
    """Turn adbutils and socket errors raised inside the block into the farm's own."""
    try:
        yield
    except DeviceError:
        raise
    except AdbTimeout as exc:
        raise DeviceTimeout(f"{serial}: {action} timed out ({exc})", serial=serial) from exc
    except AdbConnectionError as exc:
        raise DeviceLost(f"{serial}: cannot reach the adb server for {action} ({exc})",
                         serial=serial) from exc
    except AdbError as exc:
        text = str(exc)
        if any(marker in text.lower() for marker in _LOST_MARKERS):
            raise DeviceLost(f"{serial}: lost during {action} ({text})", serial=serial) from exc
        raise DeviceCommandFailed(f"{serial}: {action} failed ({text})", serial=serial) from exc
    except TimeoutError as exc:
        raise DeviceTimeout(f"{serial}: {action} timed out", serial=serial) from exc
    except (EOFError, ConnectionError, OSError) as exc:
        raise DeviceLost(f"{serial}: connection dropped during {action} ({exc})",
                         serial=serial) from exc


class AdbDeviceEntry:
    """One line of ``adb devices``: a serial and its state (device, offline, unauthorized)."""

    __slots__ = ("serial", "state")

    def __init__(self, serial: str, state: str) -> None:
        self.serial = serial
        self.state = state

    def __repr__(self) -> str:
        return f"AdbDeviceEntry({self.serial!r}, {self.state!r})"


def list_adb_devices(host: str, port: int, timeout: float = 5.0) -> tuple[AdbDeviceEntry, ...]:
    """Every phone the adb server at ``host:port`` lists, with its state."""
    client = NoSpawnAdbClient(host, port, socket_timeout=timeout)
    with translate_adb_errors(f"adb@{host}:{port}", "listing devices"):
        infos = client.list()
    return tuple(AdbDeviceEntry(info.serial, info.state) for info in infos)


_WM_OVERRIDE = re.compile(r"Override size: (\d+)x(\d+)")
_WM_PHYSICAL = re.compile(r"Physical size: (\d+)x(\d+)")


def parse_wm_size(output: str) -> tuple[int, int] | None:
    """``wm size`` output -> (width, height); the override size wins when set."""
    match = _WM_OVERRIDE.search(output) or _WM_PHYSICAL.search(output)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


_FOCUS_RES = (
    re.compile(r"mCurrentFocus=Window\{[^}]*\s(?P<package>[^\s/}]+)/(?P<activity>[^\s}]+)\}"),
    re.compile(r"mFocusedApp=.*ActivityRecord\{[^}]*\s(?P<package>[^\s/}]+)/(?P<activity>[^\s}]+)"),
    re.compile(r"mResumedActivity: ActivityRecord\{[^}]*\s(?P<package>[^\s/}]+)/(?P<activity>[^\s}]+)"),
)


def parse_focus(output: str) -> tuple[str, str] | None:
    """``dumpsys window`` / ``dumpsys activity`` output -> (package, activity) in front."""
    for pattern in _FOCUS_RES:
        match = pattern.search(output)
        if match is not None:
            return match.group("package"), match.group("activity")
    return None

