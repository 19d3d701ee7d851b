"""Live screens: each watched phone's frames, captured once and sent to every watcher.

    watcher (WebSocket) -> LiveScreens.watch(serial) -> FrameSource: a loop per watched phone
        screenshots (raw framebuffer, two in flight) -> JPEG at most 540 px wide -> every
        watcher's queue; at most ``api.live_fps`` screenshots a second (as fast as the
        fastest watcher asks: the Farm page's cards ask for a few); a screen unchanged for a
        second is looked at only 4 times a second, and sent again only every 2 s

An input (``note_input``) jumps the queue: it starts a screenshot at once, beside
those already in flight, and every screenshot started before it is dropped before
it is encoded (it cannot show the input, and its CPU is better spent on the one
that can). The newest frame wins: a frame that finishes after a newer one was sent
is dropped, never sent late. Screenshots and JPEG encoding run in the source's own
threads, never on the event loop.

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
_STILL_AFTER_S = 1.0  # a screen unchanged this long (and no input) is looked at less often:
_STILL_INTERVAL_S = 0.25  # the CPU a screenshot costs goes to the phone and the host instead


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
    """One viewer: the newest frame waits in its queue; ``interval_s`` is the most often it
    wants one (0: as often as the phone's live rate allows)."""

    loop: asyncio.AbstractEventLoop
    interval_s: float = 0.0
    queue: asyncio.Queue[Frame] = field(default_factory=lambda: asyncio.Queue(maxsize=1))

    def offer(self, frame: Frame) -> None:
        """Called in the watcher's loop: replace what was not sent yet with the newer frame."""
        if self.queue.full():
            self.queue.get_nowait()
        self.queue.put_nowait(frame)


@dataclass
class _Shots:
    """The capture loop's bookkeeping: screenshots in flight by start order, what was sent."""

    flying: dict[Future[Frame | None], int] = field(default_factory=dict)
    started: int = 0  # start order of the next screenshot
    last_start: float = 0.0
    started_inputs: int = -1  # the input counter the last screenshot was started after
    sent_order: int = -1  # start order of the newest frame sent (older ones are stale)
    input_order: int = -1  # start order of the newest screenshot started for an input
    last_crc: int | None = None
    last_inputs: int = -1
    last_sent: float = 0.0
    changed_at: float = 0.0  # when the screen last changed or an input came
    seq: int = 0


class FrameSource:
    """The capture loop of one phone: up to two screenshots in flight, the newest frame wins.

    A screenshot costs the phone most of the time (rendering and sending 10 MB of raw pixels);
    a second request in flight overlaps the transfer and the JPEG encoding of one frame with
    the next. An input starts a third at once instead of waiting for those under way (they
    were taken before the input, so they cannot show it; they are dropped unencoded).
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
        # One more thread than in flight: an input's screenshot never waits for a free one.
        self._pool = ThreadPoolExecutor(max_workers=in_flight + 1,
                                        thread_name_prefix=f"shot-{serial}")
        self._shots = _Shots()
        self.inputs = 0
        self.frames_sent = 0
        self.frames_dropped = 0  # screenshots not sent: stale (an input or a newer frame came)

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

    def _is_stale(self, order: int) -> bool:
        """Whether a screenshot started ``order``-th can no longer be the newest frame sent."""
        return order < self._shots.sent_order or order < self._shots.input_order

    def _shoot(self, inputs: int, order: int) -> Frame | None:
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
        if self._is_stale(order):
            return None  # an input or a newer frame came meanwhile: not worth encoding
        return Frame(seq=0, inputs=inputs, jpeg=encode_jpeg(raw), width=raw.width,
                     height=raw.height, taken_at=taken_at)

    def _run(self) -> None:
        shots = self._shots
        idle_since: float | None = None
        while not self._closed:
            with self._lock:
                watchers = list(self._watchers)
                inputs = self.inputs
            now = time.monotonic()
            if not watchers and not shots.flying:
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
            interval = self._interval(watchers, now)
            if watchers:
                self._start_due(inputs, interval, now)
            self._send_done(watchers, now)
            wait = max(0.0, shots.last_start + interval - time.monotonic())
            self._wake.wait(wait if len(shots.flying) < self._in_flight else 1.0)
            self._wake.clear()

    def _interval(self, watchers: list[Watcher], now: float) -> float:
        """Seconds between screenshots: the fastest watcher's wish, slower for a still screen."""
        wanted = max(self._interval_s, min(w.interval_s for w in watchers)) if watchers \
            else self._interval_s
        if now - self._shots.changed_at > _STILL_AFTER_S:
            return max(wanted, _STILL_INTERVAL_S)
        return wanted

    def _start_due(self, inputs: int, interval: float, now: float) -> None:
        shots = self._shots
        for_input = inputs != shots.started_inputs
        due = for_input or now - shots.last_start >= interval
        if not due or len(shots.flying) >= self._in_flight + (1 if for_input else 0):
            return
        order = shots.started
        if for_input and shots.started_inputs >= 0:
            shots.input_order, shots.changed_at = order, now
            for stale in [f for f, o in shots.flying.items() if o < order]:
                stale.cancel()  # not started yet: never taken
        future = self._pool.submit(self._shoot, inputs, order)
        future.add_done_callback(lambda _: self._wake.set())
        shots.flying[future] = order
        shots.started += 1
        shots.last_start, shots.started_inputs = now, inputs

    def _send_done(self, watchers: list[Watcher], now: float) -> None:
        """Send the newest finished frame if it is news; drop the older ones."""
        shots = self._shots
        done = sorted((o, f) for f, o in shots.flying.items() if f.done())
        for order, future in done:
            del shots.flying[future]
            frame = None if future.cancelled() else future.result()
            if frame is None or self._is_stale(order):
                self.frames_dropped += 1
                continue
            crc = zlib.crc32(frame.jpeg)
            shots.sent_order = order
            if crc == shots.last_crc and frame.inputs == shots.last_inputs \
                    and now - shots.last_sent < _REPEAT_S:
                continue  # the same screen again: the page has it
            if crc != shots.last_crc:
                shots.changed_at = now
            shots.seq += 1
            self._send(replace(frame, seq=shots.seq), watchers)
            shots.last_crc, shots.last_inputs, shots.last_sent = crc, frame.inputs, now

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

    def watch(self, serial: str, loop: asyncio.AbstractEventLoop, fps: float | None = None) -> Watcher:
        """Start receiving ``serial``'s frames, at most ``fps`` a second (None: the live rate);
        call :meth:`unwatch` when done."""
        watcher = Watcher(loop, interval_s=1.0 / fps if fps else 0.0)
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
