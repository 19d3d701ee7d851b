"""The HTTP API and dashboard: ``python -m bench.api`` (area "api" of docs/benchmarks.md).

1. Event to browser: a run's events published (``RunEventPublisher``) while its page is open in
   headless Chromium; the time from publication (the event's ``at``) to the moment the page has
   put it in its event log (``Date.now()`` after rendering), same clock.
2. Live screen: frames per second the page draws while the phone's screen keeps changing
   (another client scrolls it), and tap-to-frame latency: a click on the live screen (or its
   back button) until the page draws the first frame taken after the phone applied the input,
   as the page itself measures it (input counters in the frame headers).
3. Load: 50 SSE clients following one run while events are published, plus 20 reads a second
   (run, steering state, phones, pause queue): latency of the reads and of event delivery.
4. Start latency of a run asked through the API: POST /runs -> the run's ``run_started`` event,
   published by its flow in the warm runner (median and p95).
5. Under load: the live screen's tap-to-frame latency and the start latency again, side by side
   in the same run, while the bench keeps the host busy with CPU-burning processes of its own
   (``--burners``, default two per core plus one: a load average of about 5 on 2 cores).

Everything is real and local: redis-server, SeaweedFS S3, Prefect (test harness), the runner and
the API as processes (``python -m flows.runner``, ``python -m droidretriever.api``), one virtual
phone (zero latency), Debian's Chromium. It writes its block of docs/benchmarks.md only with
``--write``; run it without ``nice``, on a quiet host (it states the load average it saw).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx

from bench.results import (
    create_figure,
    parse_bench_args,
    percentile,
    save_plot,
    summarize_ms,
    write_section,
)
from bench.services import running_store
from core.config import Settings, load_settings
from core.models import (
    Point,
    Query,
    RunEvent,
    RunEventKind,
    RunManifest,
    RunStatus,
    new_id,
)
from core.redis_client import open_redis
from deploy.farm import ProcessRecord, start_process, stop_processes
from deploy.local import read_api_token
from device_farm.adb_client import list_adb_devices
from device_farm.adb_driver import AdbDriver
from device_farm.models import DeviceInfo, DeviceState
from device_farm.registry import DeviceRegistry
from droidretriever.testing import free_port, running_redis, wait_for_port
from droidretriever.testing.browser import CHROMIUM, CHROMIUM_ARGS
from flows.keys import waiting_key
from flows.pause_queue import PauseEntry, PauseQueue
from storage import ManifestStore, RunEventPublisher, open_object_store

__all__ = ["main"]

SETTINGS_APP = "com.android.settings"
AREA = "api-30"  # its block of docs/benchmarks.md (the block "api" is the figure before issue 30)


@dataclass
class Stack:
    settings: Settings
    base: str
    token: str
    sim_port: int
    serial: str
    records: list[ProcessRecord] = field(default_factory=list)

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}

    def login_link(self) -> str:
        reply = httpx.post(f"{self.base}/auth/codes", headers=self.headers(), timeout=10)
        reply.raise_for_status()
        return str(reply.json()["url"])


@contextmanager
def api_stack(state: Path) -> Iterator[Stack]:
    """Redis, S3, Prefect (harness), one virtual phone in its registry, the runner and the API."""
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    records: list[ProcessRecord] = []
    with running_redis(state / "redis") as redis_url, running_store(state) as s3:
        try:
            os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
            sim_port = free_port()
            records.append(start_process(state, "sim", ["python", "-m", "device_farm.sim", "--phones",
                                                         "1", "--port", str(sim_port)]))
            wait_for_port(sim_port, timeout=90)
            serial = _wait_until(lambda: next((e.serial for e in list_adb_devices("127.0.0.1", sim_port)
                                               if e.state == "device"), None), 60, "the virtual phone")
            with prefect_test_harness(server_startup_timeout=90):
                env = {"DROIDRETRIEVER_REDIS__URL": redis_url,
                       "DROIDRETRIEVER_STATE_DIR": str(state),
                       "DROIDRETRIEVER_S3__ENDPOINT": str(s3.endpoint),
                       "DROIDRETRIEVER_S3__BUCKET": s3.bucket,
                       "DROIDRETRIEVER_API__PORT": str(free_port()),
                       "DROIDRETRIEVER_PREFECT__API_URL": str(PREFECT_API_URL.value()),
                       "PREFECT_API_URL": str(PREFECT_API_URL.value()),
                       "PREFECT_SERVER_ALLOW_EPHEMERAL_MODE": "false"}
                os.environ.update(env)
                settings = load_settings()
                registry = DeviceRegistry.from_settings(settings)
                registry.register(DeviceInfo(serial=serial, model="sim", width=1080, height=2340,
                                             adb_port=sim_port), worker="bench")
                # The bench stands in for the phone's worker: it beats, or the farm would count the
                # phone as down and the pause queue would not offer it (issue 30's dying phones).
                beating = threading.Event()
                threading.Thread(target=_beat, args=(registry, serial, beating), daemon=True).start()
                records.append(start_process(state, "runner", ["python", "-m", "flows.runner"], env=env))
                records.append(start_process(state, "api", ["python", "-m", "droidretriever.api"], env=env))
                base = settings.api.base_url
                _wait_until(lambda: _answers(f"{base}/health"), 90, "the API")
                _wait_until(lambda: _runner_polls(), 90, "the runner")
                token = read_api_token(settings)
                if token is None:
                    raise RuntimeError("the API made no token")
                yield Stack(settings, base, token, sim_port, serial, records)
        finally:
            stop_processes(records)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 401
    except httpx.HTTPError:
        return False


def _runner_polls() -> bool:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    from flows.runner import DEPLOYMENT

    try:
        with get_client(sync_client=True) as client:
            return client.read_deployment_by_name(DEPLOYMENT).last_polled is not None
    except ObjectNotFound:
        return False


def _wait_until(check: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"{what} did not come up within {timeout_s} s")


def _beat(registry: DeviceRegistry, serial: str, stop: threading.Event) -> None:
    """Keep ``serial``'s heartbeat alive, as its worker would, until ``stop`` is set."""
    while not stop.is_set():
        registry.heartbeat(serial)
        stop.wait(registry.heartbeat_ttl_s / 3)


def _waiting_run(stack: Stack) -> str:
    """A run whose sub-flow waits for a person on the phone (what a login pause leaves)."""
    run_id = new_id("run")
    client = open_redis(stack.settings.redis)
    ManifestStore(open_object_store(stack.settings)).write(RunManifest(
        run_id=run_id, query=Query(text="benchmark"), status=RunStatus.PAUSED))
    registry = DeviceRegistry.from_settings(stack.settings)
    registry.leases.acquire(stack.serial, run_id)
    registry.set_state(stack.serial, DeviceState.PAUSED_FOR_USER)
    entry = PauseEntry(flow_run_id=new_id("flow"), run_id=run_id, subtask_id="bench-1",
                       app_label="Settings", package=SETTINGS_APP, serial=stack.serial,
                       reason="benchmark")
    client.set(waiting_key(entry.flow_run_id), run_id, ex=3600)
    PauseQueue(client).open(entry)
    return run_id


def _log_in(page: Any, stack: Stack) -> None:
    """Open a login link and let its landing page move on to the dashboard first."""
    page.goto(stack.login_link())
    page.wait_for_selector("#question")


def bench_events_in_browser(stack: Stack, events: int, interval_s: float) -> list[float]:
    """Seconds from publication to display in the page, per event."""
    from playwright.sync_api import sync_playwright

    run_id = new_id("run")
    store = open_object_store(stack.settings)
    ManifestStore(store).write(RunManifest(run_id=run_id, query=Query(text="benchmark"),
                                           status=RunStatus.RUNNING))
    publisher = RunEventPublisher(open_redis(stack.settings.redis), store)
    publisher.publish(RunEvent(run_id=run_id, kind=RunEventKind.LOG, message="opened"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(bypass_csp=True)  # lets the benchmark poll the page with expressions
        _log_in(page, stack)
        page.goto(f"{stack.base}/#/runs/{run_id}")
        page.wait_for_function("window.droidretriever && window.droidretriever.run.shown.length >= 1")
        for index in range(events):
            publisher.publish(RunEvent(run_id=run_id, kind=RunEventKind.LOG, message=f"event {index}"))
            time.sleep(interval_s)
        page.wait_for_function(f"window.droidretriever.run.shown.length >= {events + 1}",
                               timeout=30_000)
        shown = page.evaluate("window.droidretriever.run.shown")
        browser.close()
    return [(s["shownAt"] - s["at"]) / 1000 for s in shown[1:]]


@dataclass
class LiveResult:
    fps: float
    gaps: list[float]  # seconds between frames drawn
    taps: list[float]  # click -> changed frame drawn
    posts: list[float]  # click -> the input request answered
    shots: list[float]  # the phone's own screenshot of a changed screen, straight over adb
    changes_per_s: float  # how often the scroller changed the screen meanwhile
    load: float  # the host's 1-min load average at the end


_SWIPE_GAP_S = 0.05  # the live-screen scroller's pause between swipes


def _screenshots(stack: Stack) -> list[float]:
    """Seconds one screenshot of a just-changed screen takes, straight from the phone over adb."""
    phone = AdbDriver(stack.serial, port=stack.sim_port)
    phone.open_app(SETTINGS_APP)
    shots = []
    for index in range(30):
        down = index % 2 == 0
        phone.swipe(Point(x=540, y=1700 if down else 900), Point(x=540, y=900 if down else 1700), 50)
        tick = time.perf_counter()
        phone.screenshot()
        shots.append(time.perf_counter() - tick)
    phone.close()
    return shots


def _frame_rate(stack: Stack, page: Any, seconds: float) -> tuple[float, list[float], float]:
    """Frames per second the page draws while another client keeps the screen changing, the gaps
    between them, and how often the screen changed."""
    stop = threading.Event()
    swipes: list[float] = []

    def scroll() -> None:  # another client keeps the screen changing, 20 times a second
        # (twice the goal's frame rate, so every frame can show a new screen; unthrottled,
        # the virtual phone answers hundreds of swipes a second and they starve its renderer)
        scroller = AdbDriver(stack.serial, port=stack.sim_port)
        down = True
        while not stop.wait(_SWIPE_GAP_S):
            scroller.swipe(Point(x=540, y=1700 if down else 900),
                           Point(x=540, y=900 if down else 1700), 50)
            swipes.append(time.monotonic())
            down = not down
        scroller.close()

    scroller = threading.Thread(target=scroll, daemon=True)
    before = page.evaluate("window.droidretriever.live.metrics.frames.length")
    scroller.start()
    time.sleep(seconds)
    frames = page.evaluate("window.droidretriever.live.metrics.frames")
    stop.set()
    scroller.join(10)
    recent = [t for t in frames[before:] if t >= frames[-1] - seconds * 1000]
    # A frame equal to the one before is not sent: the page can draw no more new frames
    # than the screen has new states, so the scroller's own rate is measured beside it.
    changes_per_s = (len(swipes) - 1) / (swipes[-1] - swipes[0]) if len(swipes) > 1 else 0.0
    fps = (len(recent) - 1) / ((recent[-1] - recent[0]) / 1000) if len(recent) > 1 else 0.0
    return fps, [(b - a) / 1000 for a, b in pairwise(recent)], changes_per_s


def _taps(page: Any, taps: int) -> tuple[list[float], list[float]]:
    """Click -> changed frame drawn, and click -> input answered, as the page measures them."""
    page.evaluate("window.droidretriever.live.metrics.taps.length = 0")
    page.evaluate("window.droidretriever.live.metrics.posts.length = 0")
    screen = page.locator("canvas.screen").bounding_box()
    if screen is None:
        raise RuntimeError("the live screen is not on the page")
    for _ in range(taps):
        # The first entry of the Settings list opens a page; the back button returns.
        page.mouse.click(screen["x"] + screen["width"] * 0.5, screen["y"] + screen["height"] * 0.2)
        time.sleep(0.4)
        page.locator("#key-back").click()
        time.sleep(0.4)
    page.wait_for_function(f"window.droidretriever.live.metrics.taps.length >= {2 * taps}",
                           timeout=60_000)
    latencies = [t / 1000 for t in page.evaluate("window.droidretriever.live.metrics.taps")]
    posts = [t / 1000 for t in page.evaluate("window.droidretriever.live.metrics.posts")]
    return latencies, posts


def bench_live_screen(stack: Stack, seconds: float, taps: int,
                      burners: int) -> tuple[LiveResult, LiveResult]:
    """Frames per second while the screen changes, tap-to-frame latency, and, side by side,
    what one screenshot of a changing screen costs the phone itself: on an idle host, then in
    the same page with ``burners`` CPU-burning processes running."""
    from playwright.sync_api import sync_playwright

    run_id = _waiting_run(stack)
    results: list[LiveResult] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000}, bypass_csp=True)
        _log_in(page, stack)
        page.goto(f"{stack.base}/#/runs/{run_id}?takeover={stack.serial}")
        page.wait_for_selector("#takeover:not([hidden])", timeout=30_000)
        page.wait_for_function("window.droidretriever.live.metrics.frames.length >= 1")
        for load in (0, burners):
            with burning(load):
                shots = _screenshots(stack)
                fps, gaps, changes_per_s = _frame_rate(stack, page, seconds)
                latencies, posts = _taps(page, taps)
                results.append(LiveResult(fps, gaps, latencies, posts, shots, changes_per_s,
                                          os.getloadavg()[0]))
        browser.close()
    return results[0], results[1]


async def _follow(client: httpx.AsyncClient, run_id: str, delays: list[float],
                  errors: list[str], stop: asyncio.Event) -> None:
    try:
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            if response.status_code != 200:
                errors.append(f"SSE {response.status_code}")
                return
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    if event.get("message", "").startswith("load "):
                        at = time.time() - _epoch(event["at"])
                        delays.append(at)
                if stop.is_set():
                    return
    except httpx.HTTPError as exc:
        if not stop.is_set():
            errors.append(f"SSE {type(exc).__name__}")


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


async def _read_load(stack: Stack, run_id: str, clients: int, rate: float,
                     seconds: float) -> tuple[list[float], list[float], list[str]]:
    limits = httpx.Limits(max_connections=clients + 40)
    delays: list[float] = []
    reads: list[float] = []
    errors: list[str] = []
    stop = asyncio.Event()
    async with httpx.AsyncClient(base_url=stack.base, headers=stack.headers(), limits=limits,
                                 timeout=httpx.Timeout(30.0, read=60.0)) as client:
        followers = [asyncio.create_task(_follow(client, run_id, delays, errors, stop))
                     for _ in range(clients)]
        await asyncio.sleep(2.0)  # every follower connected
        publisher = RunEventPublisher(open_redis(stack.settings.redis), open_object_store(stack.settings))
        paths = [f"/runs/{run_id}", f"/runs/{run_id}/control", "/devices", "/pauses"]
        started = time.monotonic()
        count = 0
        pending: set[asyncio.Task[None]] = set()

        async def read(path: str) -> None:
            tick = time.perf_counter()
            try:
                answer = await client.get(path)
                if answer.status_code != 200:
                    errors.append(f"{path} {answer.status_code}")
            except httpx.HTTPError as exc:
                errors.append(f"{path} {type(exc).__name__}")
            reads.append(time.perf_counter() - tick)

        while time.monotonic() - started < seconds:
            task = asyncio.create_task(read(paths[count % len(paths)]))
            pending.add(task)
            task.add_done_callback(pending.discard)
            if count % 4 == 0:  # 5 events a second
                await asyncio.to_thread(publisher.publish, RunEvent(
                    run_id=run_id, kind=RunEventKind.LOG, message=f"load {count}"))
            count += 1
            await asyncio.sleep(max(0.0, started + count / rate - time.monotonic()))
        await asyncio.gather(*pending)
        await asyncio.sleep(1.0)
        stop.set()
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
    return reads, delays, errors


def bench_load(stack: Stack, clients: int, rate: float, seconds: float) -> tuple[list[float], list[float], list[str]]:
    """Read latencies, event delivery delays to the SSE clients, and errors."""
    run_id = new_id("run")
    ManifestStore(open_object_store(stack.settings)).write(RunManifest(
        run_id=run_id, query=Query(text="load"), status=RunStatus.RUNNING))
    RunEventPublisher(open_redis(stack.settings.redis), open_object_store(stack.settings)).publish(
        RunEvent(run_id=run_id, kind=RunEventKind.LOG, message="opened"))
    return asyncio.run(_read_load(stack, run_id, clients, rate, seconds))


def bench_start(stack: Stack, runs: int) -> dict[str, list[float]]:
    """POST /runs answer time, and POST -> the run's first event from the runner's flow."""
    from storage import RunEventReader

    reader = RunEventReader(open_redis(stack.settings.redis))
    timings: dict[str, list[float]] = {"answer": [], "started": []}
    for _ in range(runs):
        posted = time.time()
        tick = time.perf_counter()
        reply = httpx.post(f"{stack.base}/runs", json={"text": "Which permissions does Meituan have?"},
                           headers=stack.headers(), timeout=30)
        reply.raise_for_status()
        timings["answer"].append(time.perf_counter() - tick)
        run_id: str = reply.json()["run_id"]

        def first(kind: RunEventKind, run: str = run_id) -> RunEvent | None:
            return next((e for e in reader.read_after(run) if e.kind is kind), None)

        event = _wait_until(lambda: first(RunEventKind.RUN_STARTED), 120, "the run's first event")
        timings["started"].append(event.at.timestamp() - posted)
        # Its phone has no Meituan sub-task to run: it ends after planning. One run at a time.
        _wait_until(lambda: first(RunEventKind.RUN_FINISHED), 180, "the run to end")
    return timings


@contextmanager
def burning(processes: int) -> Iterator[None]:
    """``processes`` CPU-bound processes (plain busy loops, at the bench's own priority) running
    meanwhile: the host under load."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        if burners:
            time.sleep(5.0)  # every burner running before anything is measured
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait(10)


def _plot(events: list[float], taps: list[float], loaded_taps: list[float],
          starts: list[float], loaded_starts: list[float]) -> str:
    figure = create_figure(9.0, 3.0)
    left, middle, right = figure.subplots(1, 3)
    left.hist([e * 1000 for e in events], bins=20, color="#2563eb")
    left.set_title("event -> page (ms)", fontsize=9)
    middle.hist([[t * 1000 for t in taps], [t * 1000 for t in loaded_taps]], bins=20,
                color=["#f59e0b", "#dc2626"], label=["idle", "under load"])
    middle.set_title("click -> changed frame drawn (ms)", fontsize=9)
    middle.legend(fontsize=7)
    right.hist([[t * 1000 for t in starts], [t * 1000 for t in loaded_starts]], bins=12,
               color=["#16a34a", "#dc2626"], label=["idle", "under load"])
    right.set_title("Ask -> run_started (ms)", fontsize=9)
    right.legend(fontsize=7)
    return save_plot(AREA, "latency", figure, "Histograms of event-to-page, tap-to-frame and "
                     "start latency, idle and under load")


def _load_row(what: str, idle: list[float], loaded: list[float], goal: str) -> str:
    return f"| {what} | {summarize_ms(idle)} | {summarize_ms(loaded)} | {goal} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--taps", type=int, default=30)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=20, help="runs asked, idle and again under load")
    parser.add_argument("--burners", type=int, default=2 * (os.cpu_count() or 1) + 1,
                        help="CPU-burning processes that load the host (default: two per core + 1)")
    args = parse_bench_args(parser, argv)
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp, api_stack(Path(tmp)) as stack:
        events = bench_events_in_browser(stack, args.events, 0.1)
        live, loaded_live = bench_live_screen(stack, 10.0, args.taps, args.burners)
        reads, delays, errors = bench_load(stack, args.clients, args.rate, args.seconds)
        start = bench_start(stack, args.runs)
        idle_load = os.getloadavg()[0]
        with burning(args.burners):
            loaded_start = bench_start(stack, args.runs)
            busy_load = os.getloadavg()[0]
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    body = f"""
Load average of the host at the end (1 / 5 / 15 min): {load} on {os.cpu_count()} cores. 1-min load
at the end of each part: live screen {live.load:.1f} idle, {loaded_live.load:.1f} under load; start
latency {idle_load:.1f} idle, {busy_load:.1f} under load ({args.burners} CPU-burning processes of
the bench's own: `while True: pass`, at its priority).
Everything real and local: redis-server, SeaweedFS S3, Prefect (test harness), the runner and the
API as processes, one virtual phone (zero latency, 1080x2340), Debian's headless Chromium.

| measure | idle host | host under load | goal |
|---|---|---|---|
{_load_row("Ask (POST /runs) -> the run's flow publishes run_started", start["started"],
           loaded_start["started"], "p95 < 1 s")}
{_load_row("of which: POST /runs answered (manifest + Prefect flow run + announcement)",
           start["answer"], loaded_start["answer"], "")}
{_load_row("click on the live screen -> changed frame drawn", live.taps, loaded_live.taps,
           "p95 < 300 ms under load")}
{_load_row("of which: click -> the input request answered (auth, steering check, adb input)",
           live.posts, loaded_live.posts, "")}
{_load_row("side by side: one screenshot of a changed screen, straight from the phone over adb",
           live.shots, loaded_live.shots, "")}
| live screen while the phone changes | {live.fps:.1f} frames/s (gap {summarize_ms(live.gaps)}) | {loaded_live.fps:.1f} frames/s (gap {summarize_ms(loaded_live.gaps)}) | 10 fps |
| of which: how often the screen changed (the scroller's swipes) | {live.changes_per_s:.1f} /s | {loaded_live.changes_per_s:.1f} /s | |

| measure (idle host) | result | goal |
|---|---|---|
| event published -> shown in the run page (Chromium) | {summarize_ms(events)} | p95 < 1 s |
| load: {args.clients} SSE clients + {args.rate:.0f} reads/s for {args.seconds:.0f} s, reads | {summarize_ms(reads)} | |
| load: event delivery to the {args.clients} SSE clients | {summarize_ms(delays)} | |
| load: errors | {len(errors)}{(' (' + ', '.join(sorted(set(errors))[:3]) + ')') if errors else ''} | none |

A run starts in the warm runner (`python -m flows.runner`): POST /runs creates the Prefect flow
run of the `retrieve/dashboard` deployment and announces it on Redis; the runner, with the
project imported already, claims it and runs it in a thread through Prefect's flow engine (no
poll, no new process). Each run here ends after planning (the phone is not a worker's), one at a
time. Live frames are JPEG, 540 px wide, from one capture loop per watched phone: an input's
screenshot starts at once beside those in flight, screenshots taken before it are dropped
unencoded, the newest frame wins, and the page draws only the newest frame.

{_plot(events, live.taps, loaded_live.taps, start["started"], loaded_start["started"])}
"""
    print(body)
    write_section(AREA, "HTTP API and dashboard: runs start at once, live screen under load (issue 30)",
                  "python -m bench.api", body)
    print(f"start p95 idle {percentile(start['started'], 0.95) * 1000:.0f} ms, loaded "
          f"{percentile(loaded_start['started'], 0.95) * 1000:.0f} ms; tap p95 idle "
          f"{percentile(live.taps, 0.95) * 1000:.0f} ms, loaded "
          f"{percentile(loaded_live.taps, 0.95) * 1000:.0f} ms (1-min load {loaded_live.load:.1f}); "
          f"reads median {statistics.median(reads) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
