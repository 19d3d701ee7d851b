"""The one interface the rest of DroidRetriever uses to see and touch a phone.

``Driver`` is a Protocol: ``AdbDriver`` (adbutils; real phones, emulators and
the virtual phones) and ``U2Driver`` (uiautomator2 on real phones) implement
it, and the copilot never imports either library. Every method raises only
:mod:`device_farm.errors` types.
"""

from __future__ import annotations

from datetime import date
from typing import Protocol, runtime_checkable

from core.models import InstalledApp, Point, ScrollDirection
from device_farm.models import DeviceObservation, Key, TextEntry

__all__ = ["Driver", "plan_scroll"]


@runtime_checkable
class Driver(Protocol):
    """See and act on one phone."""

    @property
    def serial(self) -> str: ...

    def observe(self) -> DeviceObservation:
        """Screenshot (PNG), view hierarchy XML, focused package/activity, size, timings."""
        ...

    def screen_size(self) -> tuple[int, int]:
        """Width and height in pixels, portrait as the phone reports them."""
        ...

    def model(self) -> str:
        """The phone's model name (``ro.product.model``)."""
        ...

    def phone_date(self) -> date | None:
        """The phone's own calendar date (its clock, not the host's); None when it does not say."""
        ...

    def tap(self, point: Point) -> None:
        """Tap once at a pixel."""
        ...

    def long_press(self, point: Point, duration_ms: int = 800) -> None:
        """Press and hold at a pixel."""
        ...

    def swipe(self, start: Point, end: Point, duration_ms: int = 300) -> None:
        """Drag a finger from ``start`` to ``end``."""
        ...

    def scroll(self, direction: ScrollDirection, fraction: float = 0.67) -> None:
        """Move the content by ``fraction`` of the screen in ``direction`` (``down`` = see more below)."""
        ...

    def input_text(self, text: str) -> TextEntry:
        """Type into the focused field and verify it landed; raises InputNotApplied if not."""
        ...

    def key(self, key: Key) -> None:
        """Press a key (back, home, enter, ...)."""
        ...

    def open_app(self, package: str) -> None:
        """Launch an app's main activity (or bring it to front)."""
        ...

    def force_stop(self, package: str) -> None:
        """Kill an app so the next launch starts fresh."""
        ...

    def list_packages(self) -> tuple[str, ...]:
        """Installed packages, sorted."""
        ...

    def app_label(self, package: str) -> str:
        """The name a person sees under the app's icon."""
        ...

    def app_version(self, package: str) -> str:
        """The installed version of ``package`` (its ``versionName``); "" when the phone does not say."""
        ...

    def list_apps(self) -> tuple[InstalledApp, ...]:
        """Installed launchable apps with their labels."""
        ...

    def wake_and_unlock(self) -> None:
        """Turn the screen on and dismiss a swipe (no PIN) keyguard."""
        ...

    def ping(self) -> None:
        """Cheapest round trip to the phone; raises DeviceLost / DeviceTimeout when it fails."""
        ...


def plan_scroll(
    width: int, height: int, direction: ScrollDirection, fraction: float
) -> tuple[Point, Point]:
    """Start and end of the swipe that scrolls content by ``fraction`` of the screen.

    Scrolling *down* (to see what is below) drags the finger *up*. The swipe is
    centred on the screen so it stays clear of the status and navigation bars.
    """
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"scroll fraction must be in (0, 1], got {fraction}")
    cx, cy = width // 2, height // 2
    # Stay 5% inside the edges: a swipe starting on a bar is a system gesture.
    half_dy = min(int(height * fraction / 2), int(height * 0.45))
    half_dx = min(int(width * fraction / 2), int(width * 0.45))
    if direction is ScrollDirection.DOWN:
        return Point(x=cx, y=cy + half_dy), Point(x=cx, y=cy - half_dy)
    if direction is ScrollDirection.UP:
        return Point(x=cx, y=cy - half_dy), Point(x=cx, y=cy + half_dy)
    if direction is ScrollDirection.RIGHT:
        return Point(x=cx + half_dx, y=cy), Point(x=cx - half_dx, y=cy)
    return Point(x=cx - half_dx, y=cy), Point(x=cx + half_dx, y=cy)
