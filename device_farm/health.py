"""Health of one phone: observe failures in a row, probes, and when to quarantine or rejoin.

``HealthCheckedDriver`` wraps any Driver: each ``observe()`` outcome is
recorded in the registry, and after ``max_failed_observes`` failures in a row
(or at once, when the phone is lost) it raises :class:`DeviceQuarantined`.
``probe_device`` is the cheap check the worker's heartbeat runs: adb must list
the phone as ``device`` and a shell round trip must answer.

A phone is *down* when nothing can run on it: its worker stopped beating (killed,
crashed, host gone), stopped cleanly, or quarantined the phone (it does not
answer). :func:`down_reason` says so for a status the registry read;
:func:`find_down_phones` asks Redis for a few phones at once (one round trip), for
views that list many (the pause queue) and hold no registry.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import redis

from core.models import InstalledApp, Point, ScrollDirection
from device_farm.adb_client import list_adb_devices
from device_farm.driver import Driver
from device_farm.errors import DeviceError, DeviceLost, DeviceQuarantined, DeviceTimeout
from device_farm.keys import device_info_key, device_key, heartbeat_key
from device_farm.models import DeviceObservation, DeviceState, DeviceStatus, Key, TextEntry
from device_farm.registry import DeviceRegistry

__all__ = ["HealthCheckedDriver", "down_reason", "find_down_phones", "probe_device"]

_DOWN_STATES = frozenset({DeviceState.OFFLINE, DeviceState.QUARANTINED})


def _why_down(beating: bool, state: DeviceState | None, reason: str) -> str | None:
    if not beating:
        if state is DeviceState.OFFLINE and reason:
            return reason  # the monitor or the stopping worker said why
        return "its worker stopped beating (killed, crashed, or its host is gone)"
    if state in _DOWN_STATES:
        return reason or f"it is {state.value if state else 'down'}"
    return None


def down_reason(status: DeviceStatus) -> str | None:
    """None when the phone can run sub-tasks, else why not, in words."""
    return _why_down(status.heartbeat_alive, status.state, status.reason)


def find_down_phones(client: redis.Redis[bytes], serials: Iterable[str]) -> dict[str, str]:
    """The phones of ``serials`` that are down, with why; one that the registry does not know
    (a fake serial, or a Redis that restarted empty) is not said to be down."""
    wanted = list(dict.fromkeys(serials))
    if not wanted:
        return {}
    pipe = client.pipeline()
    for serial in wanted:
        pipe.exists(device_info_key(serial))
        pipe.exists(heartbeat_key(serial))
        pipe.hmget(device_key(serial), ["state", "reason"])
    replies = pipe.execute()
    down: dict[str, str] = {}
    for index, serial in enumerate(wanted):
        known, beating, (state, reason) = replies[3 * index: 3 * index + 3]
        if not known:
            continue
        why = _why_down(bool(beating), DeviceState(state.decode()) if state else None,
                        reason.decode() if reason else "")
        if why is not None:
            down[serial] = why
    return down


def probe_device(driver: Driver, adb_address: tuple[str, int] | None,
                 adb_serial: str = "") -> str | None:
    """None when the phone is healthy, else why not (in words for ``farm status``).

    ``adb_serial``: what adb lists the phone as, where it differs from ``driver.serial``.
    """
    if adb_address is not None:
        host, port = adb_address
        try:
            entries = {e.serial: e.state for e in list_adb_devices(host, port, timeout=3.0)}
        except DeviceError as exc:
            return f"adb server {host}:{port} unreachable ({exc})"
        listed = adb_serial or driver.serial
        state = entries.get(listed)
        if state is None:
            return f"adb at {host}:{port} no longer lists {listed}"
        if state != "device":
            return f"adb reports {listed} as {state}"
    try:
        driver.ping()
    except DeviceError as exc:
        return f"does not answer: {exc}"
    return None


class HealthCheckedDriver:
    """A Driver that counts observe failures and turns a sick phone into DeviceQuarantined."""

    def __init__(self, inner: Driver, registry: DeviceRegistry, max_failed_observes: int) -> None:
        self._inner = inner
        self._registry = registry
        self._limit = max_failed_observes

    @property
    def serial(self) -> str:
        return self._inner.serial

    @property
    def inner(self) -> Driver:
        return self._inner

    def observe(self) -> DeviceObservation:
        """Observe, counting failures in a row; quarantine-worthy failures become DeviceQuarantined."""
        try:
            observation = self._inner.observe()
        except (DeviceLost, DeviceTimeout) as exc:
            failures = self._registry.record_observe(self.serial, ok=False)
            raise DeviceQuarantined(
                f"{self.serial}: {exc} (observe failure {failures})", serial=self.serial
            ) from exc
        except DeviceError as exc:
            failures = self._registry.record_observe(self.serial, ok=False)
            if failures >= self._limit:
                raise DeviceQuarantined(
                    f"{self.serial}: observe failed {failures} times in a row; last: {exc}",
                    serial=self.serial,
                ) from exc
            raise
        self._registry.record_observe(self.serial, ok=True)
        return observation

    def screen_size(self) -> tuple[int, int]:
        """See :class:`Driver`."""
        return self._inner.screen_size()

    def model(self) -> str:
        """See :class:`Driver`."""
        return self._inner.model()

    def tap(self, point: Point) -> None:
        """See :class:`Driver`."""
        self._inner.tap(point)

    def long_press(self, point: Point, duration_ms: int = 800) -> None:
        """See :class:`Driver`."""
        self._inner.long_press(point, duration_ms)

    def swipe(self, start: Point, end: Point, duration_ms: int = 300) -> None:
        """See :class:`Driver`."""
        self._inner.swipe(start, end, duration_ms)

    def scroll(self, direction: ScrollDirection, fraction: float = 0.67) -> None:
        """See :class:`Driver`."""
        self._inner.scroll(direction, fraction)

    def input_text(self, text: str) -> TextEntry:
        """See :class:`Driver`."""
        return self._inner.input_text(text)

    def key(self, key: Key) -> None:
        """See :class:`Driver`."""
        self._inner.key(key)

    def open_app(self, package: str) -> None:
        """See :class:`Driver`."""
        self._inner.open_app(package)

    def force_stop(self, package: str) -> None:
        """See :class:`Driver`."""
        self._inner.force_stop(package)

    def phone_date(self) -> date | None:
        """See :class:`Driver`."""
        return self._inner.phone_date()

    def list_packages(self) -> tuple[str, ...]:
        """See :class:`Driver`."""
        return self._inner.list_packages()

    def app_label(self, package: str) -> str:
        """See :class:`Driver`."""
        return self._inner.app_label(package)

    def app_version(self, package: str) -> str:
        """See :class:`Driver`."""
        return self._inner.app_version(package)

    def list_apps(self) -> tuple[InstalledApp, ...]:
        """See :class:`Driver`."""
        return self._inner.list_apps()

    def wake_and_unlock(self) -> None:
        """See :class:`Driver`."""
        self._inner.wake_and_unlock()

    def ping(self) -> None:
        """See :class:`Driver`."""
        self._inner.ping()
