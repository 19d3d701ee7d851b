"""Value types of the device farm: what a phone shows, what it is, where it stands.

All frozen pydantic models so they cross the Celery wire and Redis as JSON.
``DeviceObservation`` is the farm's own output of ``observe()``; perception
(inference/) has its own input model and the two meet in tasks/.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from core.models import Frozen, InstalledApp

__all__ = [
    "DeviceInfo",
    "DeviceObservation",
    "DeviceState",
    "DeviceStatus",
    "InflightTask",
    "Key",
    "ObserveTimings",
    "TextEntry",
]



class Key(StrEnum):
    """Keys a driver can press, named as Android's ``KEYCODE_*`` without the prefix."""

    BACK = "back"
    HOME = "home"
    ENTER = "enter"
    DEL = "del"
    TAB = "tab"
    SEARCH = "search"
    APP_SWITCH = "app_switch"
    MENU = "menu"
    WAKEUP = "wakeup"
    POWER = "power"
    ESCAPE = "escape"

    @property
    def keycode(self) -> str:
        return f"KEYCODE_{self.value.upper()}"


class ObserveTimings(Frozen):
    screenshot_ms: float = 0.0
    hierarchy_ms: float = 0.0
    focus_ms: float = 0.0
    encode_ms: float = 0.0  # raw framebuffer -> PNG, on the host
    total_ms: float = 0.0


class DeviceObservation(Frozen):
    """One look at a phone: pixels, view tree and what is in front."""

    serial: str
    package: str
    activity: str = ""
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    screenshot_png: bytes
    hierarchy_xml: str
    timings: ObserveTimings = ObserveTimings()


class TextEntry(Frozen):
    """What ``input_text`` did: how the text was sent and whether it landed."""

    text: str
    method: str  # "input text", "adb keyboard broadcast", "uiautomator2 send_keys"
    landed: bool
    field_text: str = ""  # what the focused field shows afterwards


class DeviceInfo(Frozen):
    """What a phone is: stable facts learnt when its worker starts."""

    serial: str
    model: str = ""
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    apps: tuple[InstalledApp, ...] = ()
    adb_host: str = "127.0.0.1"
    adb_port: int = 5037
    # The serial adb knows the phone by, where ``serial`` is host-qualified
    # (device_farm.serials); empty: the same as ``serial``.
    adb_serial: str = ""

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(app.package for app in self.apps)

    @property
    def local_serial(self) -> str:
        """The serial to give the adb server at ``adb_host:adb_port``."""
        return self.adb_serial or self.serial


class DeviceState(StrEnum):
    IDLE = "idle"
    LEASED = "leased"
    PAUSED_FOR_USER = "paused_for_user"
    OFFLINE = "offline"
    QUARANTINED = "quarantined"


class InflightTask(Frozen):
    """The sub-task a worker is running now, so it can be redelivered if the worker dies."""

    task_id: str
    task_name: str
    queue: str
    started_at: datetime


class DeviceStatus(Frozen):
    """Where a phone stands now, as ``farm status`` shows it."""

    info: DeviceInfo
    state: DeviceState
    reason: str = ""  # why offline / quarantined, in words
    worker: str = ""  # Celery hostname of its worker
    lease_run: str | None = None
    lease_ttl_s: float | None = None
    last_heartbeat: datetime | None = None
    heartbeat_alive: bool = False
    tasks_done: int = 0
    tasks_failed: int = 0
    inflight: InflightTask | None = None
