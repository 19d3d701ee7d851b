"""Farm serials: the name a phone has in the registry, the queues, the API and the logs.

An adb serial names a phone on one adb server. Emulators (and the virtual phones, named like
them) are named by console port, ``emulator-5554`` on every host, and so are phones reached
over the loopback (``127.0.0.1:5555``): two hosts sharing one Redis would give two phones one
name. Such a host-local serial is qualified with the host's name, ``<host>.<adb serial>``
(``farm-a.emulator-5554``); the host part is letters, digits and ``-`` only, so the name stays
valid in Celery queue names (``device.farm-a.emulator-5554``), Redis keys, URL path segments
and file names. A serial that names one phone anywhere (USB, Wi-Fi on the LAN) stays as it is.

The adb serial is kept beside the farm serial (``DeviceInfo.adb_serial``), and the ADB driver
speaks it to adb (``AdbDriver(serial, adb_serial=...)``): the name is never parsed back.
"""

from __future__ import annotations

import re
import socket

__all__ = ["farm_serial", "host_label", "is_host_local"]

_EMULATOR = re.compile(r"^emulator-\d+$")
_LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?):\d+$")
_MAX_HOST = 24  # keeps the farm serial within the API's 64 characters


def host_label(configured: str = "") -> str:
    """This host's name in farm serials: ``configured``, else the machine's short host name."""
    name = configured or socket.gethostname().split(".", 1)[0]
    label = re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-")[:_MAX_HOST].strip("-")
    return label or "host"


def is_host_local(adb_serial: str) -> bool:
    """Whether the serial means a phone only on this host (an emulator, a loopback address)."""
    return bool(_EMULATOR.match(adb_serial) or _LOOPBACK.match(adb_serial))


def farm_serial(adb_serial: str, host: str) -> str:
    """The phone's name across the farm: ``<host>.<adb serial>`` for a host-local serial."""
    return f"{host}.{adb_serial}" if is_host_local(adb_serial) else adb_serial
