"""Live screens: each watched phone's frames, captured once and sent to every watcher.

    watcher (WebSocket) -> LiveScreens.watch(serial) -> FrameSource: a loop per watched phone
        screenshots (raw framebuffer, two in flight) -> JPEG at most 540 px wide -> every
        watcher's queue; at most ``api.live_fps`` screenshots a second; an unchanged screen is
        sent again only every 2 s; an input (``note_input``) starts a screenshot at once

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
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

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
    """The capture loop of one phone: up to two screenshots in flight, the newest frame wins.

    A screenshot costs the phone most of the time (rendering and sending 10 MB of raw pixels);
    a second request in flight overlaps the transfer and the JPEG encoding of one frame with
    the next, and an input starts a fresh screenshot at once instead of waiting for the one
    already under way (which was taken before the input, so it cannot show it).
    """

    def __init__(self, serial: str, open_driver: Callable[[], AdbDriver], interval_s: float,
                 in_flight: int = 2) -> None:
        self.serial = serial
        self._open_driver = open_driver
        self._interval_s = interval_s
        self._in_flight = in_flight
        self._watchers: set[Watcher] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix=f"shot-{serial}")
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
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _shoot(self, inputs: int) -> Frame | None:
        """One screenshot as a frame (in a pool thread, with that thread's own driver)."""
        driver: AdbDriver | None = getattr(self._local, "driver", None)
        if driver is None:
            driver = self._local.driver = self._open_driver()
        taken_at = time.time()
        try:
            raw = driver.screenshot()
        except DeviceError as exc:
            log.warning("live view of %s: %s", self.serial, exc)
            time.sleep(1.0)
            return None
        return Frame(seq=0, inputs=inputs, jpeg=encode_jpeg(raw), width=raw.width,
                     height=raw.height, taken_at=taken_at)

    def _run(self) -> None:
        flying: deque[Future[Frame | None]] = deque()
        last_start, started_inputs = 0.0, -1
        last_crc: int | None = None
        last_sent, last_inputs, seq = 0.0, -1, 0
        idle_since: float | None = None
        while not self._closed:
            with self._lock:
                watchers = list(self._watchers)
                inputs = self.inputs
            now = time.monotonic()
            if not watchers and not flying:
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
            due = now - last_start >= self._interval_s or inputs != started_inputs
            if watchers and due and len(flying) < self._in_flight:
                future = self._pool.submit(self._shoot, inputs)
                future.add_done_callback(lambda _: self._wake.set())
                flying.append(future)
                last_start, started_inputs = now, inputs
            while flying and flying[0].done():
                frame = flying.popleft().result()
                if frame is None:
                    continue
                crc = zlib.crc32(frame.jpeg)
                if crc == last_crc and frame.inputs == last_inputs and now - last_sent < _REPEAT_S:
                    continue  # the same screen again: the page has it
                seq += 1
                self._send(replace(frame, seq=seq), watchers)
                last_crc, last_inputs, last_sent = crc, frame.inputs, now
            wait = max(0.0, last_start + self._interval_s - time.monotonic())
            self._wake.wait(wait if len(flying) < self._in_flight else 1.0)
            self._wake.clear()

    def _send(self, frame: Frame, watchers: list[Watcher]) -> None:
        for watcher in watchers:
            try:
                watcher.loop.call_soon_threadsafe(watcher.offer, frame)
            except RuntimeError:
                self.remove(watcher)  # its event loop has closed
        self.frames_sent += 1


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
                driver = self._drivers[serial] = AdbDriver.for_device(info, timeout_s=10.0)
            return driver

    def source(self, serial: str) -> FrameSource:
        """The phone's frame source (its own driver, so frames never wait behind an input)."""
        with self._lock:
            found = self._sources.get(serial)
        if found is not None:
            return found
        info = self._registry.info(serial)

        def open_driver() -> AdbDriver:
            return AdbDriver.for_device(info, timeout_s=10.0)

        created = FrameSource(serial, open_driver, self._interval_s)
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
