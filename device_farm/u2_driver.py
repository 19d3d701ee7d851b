"""``U2Driver``: uiautomator2's on-phone agent for the calls where it is faster or surer.

The agent answers JSON-RPC over adb: hierarchy dumps (no file round trip),
JPEG screenshots, taps and swipes, and clipboard paste for text (works for
CJK without an extra IME). Everything else is the same shell as
:class:`AdbDriver`, which this driver wraps. The RPC seam is one method,
``jsonrpc_call(method, params, timeout)``: ``uiautomator2.Device`` provides it
on a real phone; tests give a recorded one. uiautomator2 errors are
translated here, once.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any, Protocol

import cv2
import numpy as np
import uiautomator2.exceptions as u2e

from core.models import InstalledApp, Point, ScrollDirection
from device_farm.adb_driver import AdbDriver
from device_farm.driver import plan_scroll
from device_farm.errors import (
    DeviceCommandFailed,
    DeviceError,
    DeviceLost,
    DeviceTimeout,
    InputNotApplied,
)
from device_farm.models import DeviceObservation, Key, ObserveTimings, TextEntry

__all__ = ["U2Driver", "U2Rpc", "connect_u2"]

_SWIPE_STEP_MS = 5  # uiautomator throttles each swipe step to 5 ms
_MAX_DEPTH = 50


class U2Rpc(Protocol):
    """The one call U2Driver needs from uiautomator2."""

    def jsonrpc_call(self, method: str, params: Any = None, timeout: float = 10) -> Any: ...


@contextmanager
def _translated(serial: str, action: str) -> Iterator[None]:
    try:
        yield
    except DeviceError:
        raise
    except u2e.HTTPTimeoutError as exc:
        raise DeviceTimeout(f"{serial}: uiautomator2 {action} timed out", serial=serial) from exc
    except (u2e.ConnectError, u2e.HTTPError, u2e.UiAutomationNotConnectedError) as exc:
        raise DeviceLost(
            f"{serial}: uiautomator2 agent unreachable during {action} ({exc})", serial=serial,
            hint="the agent restarts on the next call; if it keeps failing, use AdbDriver",
        ) from exc
    except (u2e.BaseException, ValueError, TypeError) as exc:
        raise DeviceCommandFailed(
            f"{serial}: uiautomator2 {action} failed: {type(exc).__name__}: {exc}", serial=serial
        ) from exc


class U2Driver:
    """Driver on a real phone through uiautomator2 (observe, touch, text) and adb (the rest)."""

    def __init__(self, adb: AdbDriver, rpc: U2Rpc, timeout_s: float = 20.0) -> None:
        self._adb = adb
        self._rpc = rpc
        self._timeout = timeout_s

    @property
    def serial(self) -> str:
        return self._adb.serial

    def _call(self, method: str, *params: Any) -> Any:
        with _translated(self.serial, method):
            return self._rpc.jsonrpc_call(method, list(params), self._timeout)

    def observe(self) -> DeviceObservation:
        """Hierarchy and screenshot from the agent; focus from adb."""
        started = time.perf_counter()
        xml = self._call("dumpWindowHierarchy", False, _MAX_DEPTH)
        if not isinstance(xml, str) or "<hierarchy" not in xml:
            raise DeviceCommandFailed(f"{self.serial}: agent returned no hierarchy",
                                      serial=self.serial)
        dumped = time.perf_counter()
        encoded = self._call("takeScreenshot", 1, 80)
        shot = time.perf_counter()
        png, width, height = self._jpeg_to_png(encoded)
        encoded_at = time.perf_counter()
        package, activity = self._adb_focus()
        done = time.perf_counter()
        return DeviceObservation(
            serial=self.serial, package=package, activity=activity, width=width, height=height,
            screenshot_png=png, hierarchy_xml=xml,
            timings=ObserveTimings(
                hierarchy_ms=(dumped - started) * 1000, screenshot_ms=(shot - dumped) * 1000,
                encode_ms=(encoded_at - shot) * 1000, focus_ms=(done - encoded_at) * 1000,
                total_ms=(done - started) * 1000,
            ),
        )

    def _jpeg_to_png(self, encoded: Any) -> tuple[bytes, int, int]:
        try:
            raw = base64.b64decode(str(encoded), validate=True)
            image = cv2.imdecode(np.frombuffer(raw, dtype=np.uint8), cv2.IMREAD_COLOR)
        except ValueError as exc:
            raise DeviceCommandFailed(f"{self.serial}: screenshot is not base64: {exc}",
                                      serial=self.serial) from exc
        if image is None:
            raise DeviceCommandFailed(f"{self.serial}: screenshot is not a JPEG image",
                                      serial=self.serial)
        ok, buffer = cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        if not ok:
            raise DeviceCommandFailed(f"{self.serial}: PNG encoding failed", serial=self.serial)
        height, width = image.shape[:2]
        return buffer.tobytes(), int(width), int(height)

    def _adb_focus(self) -> tuple[str, str]:
        return self._adb.focused_app()

    def tap(self, point: Point) -> None:
        """Agent ``click``."""
        self._call("click", point.x, point.y)

    def long_press(self, point: Point, duration_ms: int = 800) -> None:
        """Agent ``click`` with a duration."""
        self._call("click", point.x, point.y, duration_ms)

    def swipe(self, start: Point, end: Point, duration_ms: int = 300) -> None:
        """Agent ``swipe``; uiautomator counts steps of 5 ms."""
        steps = max(1, duration_ms // _SWIPE_STEP_MS)
        self._call("swipe", start.x, start.y, end.x, end.y, steps)

    def scroll(self, direction: ScrollDirection, fraction: float = 0.67) -> None:
        """A slow swipe over ``fraction`` of the screen."""
        width, height = self.screen_size()
        start, end = plan_scroll(width, height, direction, fraction)
        self.swipe(start, end, duration_ms=500)

    def input_text(self, text: str) -> TextEntry:
        """Paste through the clipboard (any script), then check the focused field."""
        self._call("setClipboard", "droidretriever", text)
        self._call("pasteClipboard")
        xml = self._call("dumpWindowHierarchy", False, _MAX_DEPTH)
        from lxml import etree

        try:
            root = etree.fromstring(str(xml).encode("utf-8"))
        except etree.XMLSyntaxError as exc:
            raise DeviceCommandFailed(f"{self.serial}: hierarchy unreadable: {exc}",
                                      serial=self.serial) from exc
        focused = root.xpath("//node[@focused='true']")
        field = str(focused[-1].get("text", "")) if focused else None
        if field is None or text not in field:
            raise InputNotApplied(
                f"{self.serial}: pasted {text!r} but the focused field shows {field!r}",
                serial=self.serial,
            )
        return TextEntry(text=text, method="uiautomator2 clipboard paste", landed=True,
                         field_text=field)

    def screen_size(self) -> tuple[int, int]:
        """See :class:`AdbDriver`."""
        return self._adb.screen_size()

    def model(self) -> str:
        """See :class:`AdbDriver`."""
        return self._adb.model()

    def key(self, key: Key) -> None:
        """See :class:`AdbDriver`."""
        self._adb.key(key)

    def open_app(self, package: str) -> None:
        """See :class:`AdbDriver`."""
        self._adb.open_app(package)

    def force_stop(self, package: str) -> None:
        """See :class:`AdbDriver`."""
        self._adb.force_stop(package)

    def phone_date(self) -> date | None:
        """See :class:`AdbDriver`."""
        return self._adb.phone_date()

    def list_packages(self) -> tuple[str, ...]:
        """See :class:`AdbDriver`."""
        return self._adb.list_packages()

    def app_label(self, package: str) -> str:
        """See :class:`AdbDriver`."""
        return self._adb.app_label(package)

    def app_version(self, package: str) -> str:
        """See :class:`AdbDriver`."""
        return self._adb.app_version(package)

    def list_apps(self) -> tuple[InstalledApp, ...]:
        """See :class:`AdbDriver`."""
        return self._adb.list_apps()

    def wake_and_unlock(self) -> None:
        """See :class:`AdbDriver`."""
        self._adb.wake_and_unlock()

    def ping(self) -> None:
        """See :class:`AdbDriver`."""
        self._adb.ping()


def connect_u2(adb: AdbDriver) -> U2Driver:
    """Start (or reach) the uiautomator2 agent on a real phone and wrap it."""
    import uiautomator2

    with _translated(adb.serial, "connect"):
        device = uiautomator2.connect(adb.serial)
    return U2Driver(adb, device)
