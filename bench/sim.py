"""Benchmark the virtual phones: adbutils round trips (1 and 16 phones) and render + dump per app.

    python -m bench.sim            # writes the "sim" block of docs/benchmarks.md

The ADB server runs in its own process (as Celery workers see it), the
clients here; screenshot + dump = ``d.screenshot()`` + ``d.dump_hierarchy()``.
"""

from __future__ import annotations

import io
import socket
import statistics
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import adbutils
from PIL import Image

from bench.results import parse_bench_args, percentile, write_section
from device_farm.sim.catalog import load_catalog
from device_farm.sim.phone import Phone, PhoneIdentity
from device_farm.sim.spec import AppSpec, Record, Widget, WidgetType
from device_farm.sim.state import Page
from device_farm.sim.template import Scope

__all__ = ["main"]

_ROUNDS_ONE = 60
_ROUNDS_EACH = 12


def _round_trip(d: adbutils.AdbDevice) -> float:
    start = time.perf_counter()
    d.screenshot()
    d.dump_hierarchy()
    return time.perf_counter() - start


def _raw_request(port: int, serial: str, service: str, sync_path: str | None = None) -> bytes:
    """One device service over a plain socket: what adbutils does minus its 10 ms sleep on close."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for request in (f"host:transport:{serial}", service):
            sock.sendall(f"{len(request):04x}{request}".encode())
            if sock.recv(4) != b"OKAY":
                raise RuntimeError(f"{service} refused")
        if sync_path is not None:
            raw = sync_path.encode()
            sock.sendall(b"RECV" + struct.pack("<I", len(raw)) + raw)
        chunks = []
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
            if sync_path is not None and b"".join(chunks).endswith(b"DONE\x00\x00\x00\x00"):
                break
        return b"".join(chunks)


def _raw_round_trip(port: int, serial: str) -> float:
    start = time.perf_counter()
    png = _raw_request(port, serial, "shell:screencap -p")
    Image.open(io.BytesIO(png)).load()
    _raw_request(port, serial, "shell:uiautomator dump /sdcard/window_dump.xml")
    _raw_request(port, serial, "sync:", "/sdcard/window_dump.xml")
    return time.perf_counter() - start


def _measure_raw(phones: int, rounds: int) -> list[float]:
    proc, port = _start_server(phones)
    try:
        serials = [f"emulator-{5554 + 2 * i}" for i in range(phones)]
        client = adbutils.AdbClient("127.0.0.1", port)
        for serial in serials:
            client.device(serial).app_start("com.mcdonalds.gma.cn")
            client.device(serial).keyevent("BACK")
            client.device(serial).app_start("com.mcdonalds.gma.cn")
            _raw_round_trip(port, serial)

        def drive(serial: str) -> list[float]:
            return [_raw_round_trip(port, serial) for _ in range(rounds)]

        with ThreadPoolExecutor(max_workers=phones) as pool:
            return [s for samples in pool.map(drive, serials) for s in samples]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _start_server(phones: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-m", "device_farm.sim", "--phones", str(phones), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    return proc, int(line.rsplit(":", 1)[1])


def _measure_adb(phones: int, rounds: int) -> list[float]:
    proc, port = _start_server(phones)
    try:
        client = adbutils.AdbClient("127.0.0.1", port)
        devices = [client.device(s.serial) for s in client.device_list()]
        for d in devices:
            d.app_start("com.mcdonalds.gma.cn")
            d.keyevent("BACK")  # close a launch pop-up if one opened
            d.app_start("com.mcdonalds.gma.cn")
            _round_trip(d)  # warm the screen cache, as a driver's first look does

        def drive(d: adbutils.AdbDevice) -> list[float]:
            return [_round_trip(d) for _ in range(rounds)]

        with ThreadPoolExecutor(max_workers=phones) as pool:
            return [s for samples in pool.map(drive, devices) for s in samples]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _sample_records(phone: Phone, app: AppSpec) -> dict[str, Record]:
    """For each screen opened from a list item, the first record that list shows."""
    found: dict[str, Record] = {}
    for screen in app.screens.values():
        stack: list[Widget] = list(screen.body)
        while stack:
            widget = stack.pop()
            stack.extend(widget.children)
            if widget.type is WidgetType.LIST and widget.item is not None and widget.item.go:
                records = phone.records_for(app, widget, Scope(record=next(iter(found.values()), None)))
                if records:
                    found.setdefault(widget.item.go, records[0])
    return found


def _render_dump_s(phone: Phone, package: str, screen: str, record: Record | None) -> tuple[float, int]:
    phone.state.foreground = package
    phone.state.stacks[package] = [Page(screen, record)]
    phone.state.dialog = None
    times = []
    for _ in range(5):
        phone.touch()
        start = time.perf_counter()
        phone.screenshot_image()
        phone.dump_xml()
        times.append(time.perf_counter() - start)
    count = sum(1 for w in phone.frame().windows for _ in w.walk())
    return statistics.median(times), count


def _measure_apps() -> list[tuple[str, str, int, float]]:
    catalog = load_catalog()
    phone = Phone(PhoneIdentity("emulator-5554"), catalog)
    rows = []
    for app in sorted(catalog.apps.values(), key=lambda a: a.label.casefold()):
        records = _sample_records(phone, app)
        best: tuple[str, int, float] | None = None
        for screen in app.screens:
            seconds, count = _render_dump_s(phone, app.package, screen, records.get(screen))
            if best is None or count > best[1]:
                best = (screen, count, seconds)
        if best is not None:
            rows.append((app.label, best[0], best[1], best[2]))
    return rows


def _ms(samples: list[float]) -> tuple[float, float]:
    ms = [s * 1000 for s in samples]
    return statistics.median(ms), percentile(ms, 0.95)


def main(argv: list[str] | None = None) -> None:
    parse_bench_args(argv=argv)
    one = _measure_adb(1, _ROUNDS_ONE)
    sixteen = _measure_adb(16, _ROUNDS_EACH)
    raw_one = _measure_raw(1, _ROUNDS_ONE)
    raw_sixteen = _measure_raw(16, _ROUNDS_EACH)
    apps = _measure_apps()
    m1, p1 = _ms(one)
    m16, p16 = _ms(sixteen)
    r1, rp1 = _ms(raw_one)
    r16, rp16 = _ms(raw_sixteen)
    lines = [
        "Screenshot (`screencap -p`, PNG decoded by adbutils) + `uiautomator dump` pulled over sync, "
        "through adbutils against the simulator running in its own process; zero latency profile; "
        "unchanged screen (served from the phone's frame cache, as between two looks at a static page).",
        "",
        "| phones driven at once | median | p95 | samples | goal |",
        "|---|---|---|---|---|",
        f"| 1 | {m1:.1f} ms | {p1:.1f} ms | {len(one)} | median < 40 ms |",
        f"| 16 | {m16:.1f} ms | {p16:.1f} ms | {len(sixteen)} | p95 < 150 ms |",
        "",
        "adbutils 2.12 sleeps 10 ms in every `AdbConnection.close()` and opens 6 connections for a "
        "screenshot + dump (2 of them `host:version`), a ~60 ms client-side floor. The same requests "
        "from a plain-socket client (transport + service per connection, PNG decoded too) show what "
        "the simulator itself costs:",
        "",
        "| phones driven at once (plain socket) | median | p95 | samples |",
        "|---|---|---|---|",
        f"| 1 | {r1:.1f} ms | {rp1:.1f} ms | {len(raw_one)} |",
        f"| 16 | {r16:.1f} ms | {rp16:.1f} ms | {len(raw_sixteen)} |",
        "",
        f"16-phone / 1-phone median through adbutils: {m16 / m1:.1f}x. The plain-socket 16-phone row "
        "is bound by the benchmark's own 16 client threads decoding 1080x2340 PNGs under one GIL on "
        "2 shared cores, not by the server (one event loop; cached frames).",
        "",
        "Render + dump of each app's largest screen (most nodes), cache cleared each time, "
        "median of 5 (compose + lay out + draw + XML; PNG encoding excluded):",
        "",
        "| app | screen | nodes | render + dump |",
        "|---|---|---|---|",
        *(f"| {label} | {screen} | {count} | {sec * 1000:.1f} ms |" for label, screen, count, sec in apps),
    ]
    path = write_section("sim", "Virtual phones (device_farm/sim)", "python -m bench.sim", "\n".join(lines))
    print("\n".join(lines))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
