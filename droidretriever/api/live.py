"""Live screens: each watched phone's frames, captured once and sent to every watcher.

    watcher (WebSocket) -> LiveScreens.watch(serial) -> FrameSource: a thread per watched phone
        screenshot (raw framebuffer) -> JPEG at most 540 px wide -> every watcher's queue
        at most ``api.live_fps`` frames a second; an unchanged screen is sent again only every
        2 s; an input (``note_input``) wakes the thread at once

Every frame carries the phone's input counter as it was *before* the frame was
taken, so a page that sent input number ``n`` knows the first frame with
``inputs >= n`` shows its result: the tap-to-frame latency, measured in the
browser. A watcher that cannot keep up gets the newest frame, never a backlog.
The thread ends a few seconds after the last watcher leaves.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceError
from device_farm.registry import DeviceRegistry
from device_farm.screencap import encode_jpeg

__all__ = ["Frame", "FrameSource", "LiveScreens", "Watcher"]

log = logging.getLogger(__name__)

_REPEAT_S = 2.0  # an unchanged screen is sent again this often (the page knows it is live)
_LINGER_S = 5.0  # the capture thread waits this long for a new watcher before it ends
_APP_CACHE_S = 2.0


@dataclass(frozen=True)
class Frame:
    """One JPEG of a phone's screen."""

    seq: int
    inputs: int  # the phone's input counter when the frame was taken (all of those are in it)
    jpeg: bytes
    width: int  # the phone's screen size (the JPEG may be smaller)
    height: int
    taken_at: float  # time.time() when the screenshot was asked for


@dataclass(eq=False)
class Watcher:
    """One viewer: the newest frame waits in its queue."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Frame] = field(default_factory=lambda: asyncio.Queue(maxsize=1))

    def offer(self, frame: Frame) -> None:
        """Called in the watcher's loop: replace what was not sent yet with the newer frame."""
        if self.queue.full():
            self.queue.get_nowait()
        self.queue.put_nowait(frame)


class FrameSource:
    """The capture thread of one phone."""

    def __init__(self, serial: str, driver: AdbDriver, interval_s: float) -> None:
        self.serial = serial
        self._driver = driver
        self._interval_s = interval_s
        self._watchers: set[Watcher] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.inputs = 0
        self.frames_sent = 0

    def add(self, watcher: Watcher) -> None:
        with self._lock:
            self._watchers.add(watcher)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"live-{self.serial}")
                self._thread.start()
        self._wake.set()

    def remove(self, watcher: Watcher) -> None:
        with self._lock:
            self._watchers.discard(watcher)

    def note_input(self) -> int:
        """Count an input that has been applied and take a frame now; returns the count."""
        with self._lock:
            self.inputs += 1
            count = self.inputs
        self._wake.set()
        return count

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def _run(self) -> None:
        last_crc: int | None = None
        last_inputs = -1
        last_sent = 0.0
        seq = 0
        idle_since: float | None = None
        while not self._closed:
            with self._lock:
                watchers = list(self._watchers)
                inputs = self.inputs
            now = time.monotonic()
            if not watchers:
                idle_since = idle_since or now
                if now - idle_since > _LINGER_S:
                    with self._lock:
                        if not self._watchers:
                            self._thread = None
                            return
                self._wake.wait(0.5)
                self._wake.clear()
                continue
            idle_since = None
            self._wake.clear()
            taken_at = time.time()
            try:
                raw = self._driver.screenshot()
            except DeviceError as exc:
                log.warning("live view of %s: %s", self.serial, exc)
                self._wake.wait(1.0)
                continue
            jpeg = encode_jpeg(raw)
            crc = zlib.crc32(jpeg)
            if crc != last_crc or inputs != last_inputs or now - last_sent >= _REPEAT_S:
                seq += 1
                frame = Frame(seq=seq, inputs=inputs, jpeg=jpeg, width=raw.width,
                              height=raw.height, taken_at=taken_at)
                for watcher in watchers:
                    try:
                        watcher.loop.call_soon_threadsafe(watcher.offer, frame)
                    except RuntimeError:
                        self.remove(watcher)  # its event loop has closed
                self.frames_sent += 1
                last_crc, last_inputs, last_sent = crc, inputs, now
            elapsed = time.monotonic() - now
            self._wake.wait(max(0.0, self._interval_s - elapsed))


class LiveScreens:
    """The API's live views, drivers and input counters, one set per phone."""

    def __init__(self, registry: DeviceRegistry, *, fps: float) -> None:
        self._registry = registry
        self._interval_s = 1.0 / fps
        self._sources: dict[str, FrameSource] = {}
        self._drivers: dict[str, AdbDriver] = {}
        self._apps: dict[str, tuple[float, tuple[str, str]]] = {}
        self._queues: dict[str, ThreadPoolExecutor] = {}
        self._lock = threading.Lock()

    def driver(self, serial: str) -> AdbDriver:
        """The driver the API uses for ``serial`` (the workers' kind, on the phone's adb server)."""
        with self._lock:
            driver = self._drivers.get(serial)
            if driver is None:
                info = self._registry.info(serial)
                driver = self._drivers[serial] = AdbDriver(serial, host=info.adb_host,
                                                           port=info.adb_port, timeout_s=10.0)
            return driver

    def source(self, serial: str) -> FrameSource:
        """The phone's frame source (its own driver, so frames never wait behind an input)."""
        with self._lock:
            found = self._sources.get(serial)
        if found is not None:
            return found
        info = self._registry.info(serial)
        created = FrameSource(serial, AdbDriver(serial, host=info.adb_host, port=info.adb_port,
                                                timeout_s=10.0), self._interval_s)
        with self._lock:
            return self._sources.setdefault(serial, created)

    def watch(self, serial: str, loop: asyncio.AbstractEventLoop) -> Watcher:
        """Start receiving ``serial``'s frames (call :meth:`unwatch` when done)."""
        watcher = Watcher(loop)
        self.source(serial).add(watcher)
        return watcher

    def unwatch(self, serial: str, watcher: Watcher) -> None:
        self.source(serial).remove(watcher)

    def note_input(self, serial: str) -> int:
        """An input reached ``serial``: count it and refresh its live view now."""
        return self.source(serial).note_input()

    def later(self, serial: str, work: Callable[[], None]) -> None:
        """Run ``work`` off the request, after the phone's earlier work, in order."""
        with self._lock:
            queue = self._queues.get(serial)
            if queue is None:
                queue = self._queues[serial] = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix=f"after-input-{serial}")
        queue.submit(work)

    def current_app(self, serial: str) -> tuple[str, str]:
        """(package, activity) in front, asked at most every 2 s per phone; ("", "") if unknown."""
        now = time.monotonic()
        cached = self._apps.get(serial)
        if cached is not None and now - cached[0] < _APP_CACHE_S:
            return cached[1]
        try:
            found = self.driver(serial).focused_app()
        except DeviceError:
            found = ("", "")
        self._apps[serial] = (now, found)
        return found

    def close(self) -> None:
        """Stop every capture thread and driver."""
        with self._lock:
            sources, drivers = list(self._sources.values()), list(self._drivers.values())
            queues = list(self._queues.values())
        for queue in queues:
            queue.shutdown(wait=True, cancel_futures=False)
        for source in sources:
            source.close()
        for driver in drivers:
            driver.close()
