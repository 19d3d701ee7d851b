"""The farm in one line, for ``droidretriever up | status``: is one up, and are its workers well.

``farm status`` shows every phone; the stack commands only need to know
whether a farm is running, how many phones it has and how many of their
workers beat. :func:`summarize_farm` reads the manifest (``farm up``'s record
of its processes) and the registry once.
"""

from __future__ import annotations

from collections import Counter

import redis
from pydantic import BaseModel, ConfigDict

from core.config import Settings
from deploy.farm.processes import is_running, read_manifest
from deploy.local.probes import is_adb_refused
from device_farm.registry import DeviceRegistry

__all__ = ["FarmSummary", "summarize_farm"]


class FarmSummary(BaseModel):
    """What ``droidretriever status`` says about the farm."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    up: bool  # some process of a recorded farm still runs
    mode: str = ""  # sim | adb | emulators
    phones: int = 0
    processes_running: int = 0
    processes_total: int = 0
    workers_healthy: int = 0  # registered and beating
    states: dict[str, int] = {}  # device state -> phones in it
    registry_error: str = ""  # why the registry could not be read, when it could not
    adb_open: bool = False  # the virtual phones' ADB port serves another user (status checks)

    @property
    def healthy(self) -> bool:
        """Up, every process alive and every phone's worker beating."""
        return (self.up and not self.registry_error and not self.adb_open
                and self.processes_running == self.processes_total
                and self.workers_healthy == self.phones)

    def describe(self) -> str:
        """One line for a person: mode, phones, healthy workers, states."""
        if not self.up:
            return "device farm: not running"
        states = ", ".join(f"{count} {state}" for state, count in sorted(self.states.items()))
        workers = (f"registry unreachable ({self.registry_error})" if self.registry_error
                   else f"{self.workers_healthy}/{self.phones} workers healthy")
        phones = f"{self.phones} phone" + ("" if self.phones == 1 else "s")
        door = "; OPEN: the phones' ADB port serves other users" if self.adb_open else ""
        return (f"device farm ({self.mode}): {phones}, {workers}, "
                f"{self.processes_running}/{self.processes_total} processes running"
                + (f"; {states}" if states else "") + door)


def summarize_farm(settings: Settings) -> FarmSummary:
    """The farm recorded under ``settings.state_dir``, checked against the registry in Redis."""
    manifest = read_manifest(settings.state_dir)
    if manifest is None:
        return FarmSummary(up=False)
    running = sum(1 for record in manifest.processes if is_running(record))
    if running == 0:
        return FarmSummary(up=False)
    adb_open = manifest.mode == "sim" and is_adb_refused(manifest.adb_host, manifest.adb_port) is False
    summary = FarmSummary(up=True, mode=manifest.mode, phones=len(manifest.serials),
                          processes_running=running, processes_total=len(manifest.processes),
                          adb_open=adb_open)
    try:
        statuses = DeviceRegistry.from_settings(settings, retry_window_s=0).statuses()
    except redis.RedisError as exc:
        return summary.model_copy(update={"registry_error": str(exc)})
    ours = [s for s in statuses if s.info.serial in manifest.serials]
    return summary.model_copy(update={
        "workers_healthy": sum(1 for s in ours if s.heartbeat_alive),
        "states": dict(Counter(s.state.value for s in ours)),
    })
