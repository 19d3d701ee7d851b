"""A phone's mutable state: plain dataclasses, deep-copied for snapshots.

Everything that changes what the phone shows lives here (and only here), so
a named snapshot is a ``copy.deepcopy`` and a reset puts one back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from device_farm.sim.replay.cursor import ReplayCursor, ReplayStep
from device_farm.sim.spec import DialogSpec, Record

__all__ = ["OpenDialog", "Page", "PhoneState", "Toast"]


@dataclass
class Page:
    """One entry of an app's back stack."""

    screen: str
    record: Record | None = None
    query: str = ""
    offset: int = 0  # scroll offset of the body, in pixels
    pending: Page | None = None  # login page: where to continue after logging in


@dataclass
class OpenDialog:
    package: str
    dialog: str
    spec: DialogSpec | None = None  # an injected pop-up not in the app's spec


@dataclass
class Toast:
    text: str
    until: float  # simulated clock time (seconds) when it disappears


@dataclass
class PhoneState:
    foreground: str | None = None  # package in front; None = launcher
    stacks: dict[str, list[Page]] = field(default_factory=dict)  # running apps
    launcher_offset: int = 0
    logged_in: dict[str, bool] = field(default_factory=dict)
    permissions: dict[str, dict[str, str]] = field(default_factory=dict)  # package -> name -> status
    inputs: dict[str, str] = field(default_factory=dict)  # "<package>/<input key>" -> text
    focused: str | None = None  # input key of the focused field (in the foreground app)
    toggles: dict[str, bool] = field(default_factory=dict)  # "<package>/<toggle key>" -> checked
    dialog: OpenDialog | None = None
    popups_seen: set[str] = field(default_factory=set)
    launches: int = 0  # counts launches and screen entries, to vary seeded pop-ups
    toast: Toast | None = None
    shade_open: bool = False
    network_error: set[str] = field(default_factory=set)  # packages showing the error page
    dismissed_notifications: set[str] = field(default_factory=set)
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # path -> (content, mtime)
    replay: dict[str, ReplayCursor] = field(default_factory=dict)  # running recorded apps
    replay_trail: list[ReplayStep] = field(default_factory=list)  # every action on them, oldest first
