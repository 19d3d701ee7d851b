"""The farm's Redis keys, in one place (all under ``farm:``).

    farm:devices                  SET   every serial ever registered (until removed)
    farm:device:<serial>:info     STR   DeviceInfo JSON (model, size, apps with labels)
    farm:device:<serial>          HASH  state, reason, worker, tasks_done, tasks_failed,
                                        failed_observes (in a row), inflight (InflightTask JSON)
    farm:heartbeat:<serial>       STR   ISO time of the last beat; expires after
                                        heartbeat_s * heartbeat_missed, so "missing" = missed beats
    farm:lease:<serial>           STR   the run holding the phone (device_farm.leases)

Only :mod:`device_farm.registry` and :mod:`device_farm.leases` read and write
them (:func:`device_farm.health.find_down_phones` reads a few at once); other
packages ask the registry (``DeviceRegistry.is_registered`` ...).
"""

from __future__ import annotations

__all__ = [
    "DEVICES_KEY",
    "LEASE_PREFIX",
    "device_info_key",
    "device_key",
    "heartbeat_key",
    "lease_key",
]

DEVICES_KEY = "farm:devices"
LEASE_PREFIX = "farm:lease:"


def device_key(serial: str) -> str:
    """The phone's hash: state, reason, worker, counters, in-flight sub-task."""
    return f"farm:device:{serial}"


def device_info_key(serial: str) -> str:
    """The phone's ``DeviceInfo`` JSON."""
    return f"farm:device:{serial}:info"


def heartbeat_key(serial: str) -> str:
    """The phone worker's last beat; it expires when beats are missed."""
    return f"farm:heartbeat:{serial}"


def lease_key(serial: str) -> str:
    """The run that holds the phone."""
    return LEASE_PREFIX + serial
