"""Fault injection, snapshots, clock and latency through the control API."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import adbutils
import pytest

from core.config import LatencyProfile
from device_farm.sim import (
    APPS_DIR,
    AppSpecError,
    ControlError,
    SimControlClient,
    SimServer,
    load_app,
)
from tests.device_farm.sim.conftest import find, nodes, open_app, tap_node
from tests.support.example_apps import example_catalog


def test_dropped_connection_is_an_adb_error_then_recovers(sim: SimServer, device: adbutils.AdbDevice) -> None:
    sim.control.drop_connections(sim.serials[0], count=1)
    with pytest.raises(adbutils.AdbError):
        device.shell("echo hi")
    assert device.shell("echo hi") == "hi"


def test_frozen_phone_times_out_other_phones_answer(sim: SimServer) -> None:
    client = adbutils.AdbClient("127.0.0.1", sim.port)
    sim.control.freeze(sim.serials[0], seconds=30)
    try:
        with pytest.raises(adbutils.AdbTimeout):
            client.device(sim.serials[0]).shell("echo hi", timeout=0.5)
        assert client.device(sim.serials[1]).shell("echo other") == "other"
    finally:
        sim.control.unfreeze(sim.serials[0])
    assert client.device(sim.serials[0]).shell("echo back") == "back"


def test_slow_screenshot_and_realistic_latency(sim: SimServer, device: adbutils.AdbDevice) -> None:
    sim.control.slow_screenshot(sim.serials[0], 0.4)
    start = time.perf_counter()
    device.shell("screencap -p", encoding=None)
    assert time.perf_counter() - start >= 0.4
    sim.control.clear_faults(sim.serials[0])
    sim.control.set_latency(LatencyProfile.REALISTIC, sim.serials[0])
    try:
        start = time.perf_counter()
        device.shell("input keyevent HOME")
        assert time.perf_counter() - start >= 0.3
    finally:
        sim.control.set_latency(LatencyProfile.ZERO)


def test_network_error_page_and_unexpected_popup(sim: SimServer, device: adbutils.AdbDevice) -> None:
    sim.control.network_error(sim.serials[0], "com.mcdonalds.gma.cn")
    open_app(device, "com.mcdonalds.gma.cn")
    assert find(device, text="Network error. Check your connection and try again.") is not None
    assert find(device, text="Big Mac") is None
    sim.control.network_error(sim.serials[0], "com.mcdonalds.gma.cn", on=False)
    assert find(device, text="Big Mac") is not None
    sim.control.popup(sim.serials[0], title="Rate us!")
    assert find(device, text="Rate us!") is not None
    tap_node(device, find(device, text="Close") or {})
    assert find(device, text="Rate us!") is None


def test_offline_phone_is_listed_offline_and_refused(sim: SimServer, device: adbutils.AdbDevice) -> None:
    sim.control.set_offline(sim.serials[0])
    client = adbutils.AdbClient("127.0.0.1", sim.port)
    assert [i.state for i in client.list()] == ["offline", "device"]
    with pytest.raises(adbutils.AdbError, match="device offline"):
        device.shell("echo hi")


def test_snapshot_and_reset(sim: SimServer, device: adbutils.AdbDevice) -> None:
    open_app(device, "com.android.settings")
    sim.control.snapshot("in-settings", sim.serials[0])
    device.keyevent("HOME")
    assert device.app_current().package == "com.android.launcher3"
    sim.control.reset("in-settings", sim.serials[0])
    assert device.app_current().package == "com.android.settings"
    with pytest.raises(ControlError, match="no snapshot 'nope'"):
        sim.control.reset("nope", sim.serials[0])
    with pytest.raises(ControlError, match="no phone"):
        sim.control.freeze("emulator-9999")


def test_clock_days_vary_prices_reproducibly(sim: SimServer, device: adbutils.AdbDevice) -> None:
    def prices() -> list[str]:
        open_app(device, "com.mcdonalds.gma.cn")
        tap_node(device, find(device, text="Menu") or {})
        return [n["text"] for n in nodes(device) if n["resource-id"].endswith("item_price")]

    day0 = prices()
    assert day0[0] == "¥24.0"  # day 0 is the data as written
    sim.control.set_day(3, sim.serials[0])
    day3 = prices()
    assert day3 != day0
    assert sim.control.status(sim.serials[0])[0].day == 3
    sim.control.reset("boot", sim.serials[0])
    sim.control.set_day(3, sim.serials[0])
    assert prices() == day3  # same seed, same day: same screen


def test_control_from_another_process(tmp_path: Path) -> None:
    app_file = str(APPS_DIR / "meituan.yaml")
    proc = subprocess.Popen([sys.executable, "-m", "device_farm.sim", "--phones", "1", "--port", "0",
                             "--apps", app_file], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        port = int(line.rsplit(":", 1)[1])
        control = SimControlClient("127.0.0.1", port)
        control.network_error("emulator-5554", "com.sankuai.meituan")
        assert control.status()[0].network_error == ["com.sankuai.meituan"]
        d = adbutils.AdbClient("127.0.0.1", port).device("emulator-5554")
        d.app_start("com.sankuai.meituan")
        assert "Network error" in d.dump_hierarchy()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_invalid_app_spec_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("package: com.example.bad\nlabel: Bad\nscreens:\n  home:\n    body:\n"
                    "      - {type: text, go: nowhere}\n")
    with pytest.raises(AppSpecError) as info:
        load_app(path)
    assert str(path) in str(info.value)
    assert "unknown screen 'nowhere'" in str(info.value)


def test_a_status_longer_than_adb_lengths_arrives_whole() -> None:
    # ADB frames carry at most 65,535 bytes (4 hex digits); a phone that has done a lot (its replay
    # trail, its snapshots) says more than that, and the reply must still parse.
    with SimServer(phones=1, port=0, seed=7, catalog=example_catalog()) as server:
        serial = server.serials[0]
        for n in range(700):
            server.control.snapshot(f"{'checkpoint-' * 9}{n:04d}", serial)
        status = server.control.status(serial)[0]
    assert len(status.model_dump_json()) > 0xFFFF
    assert len(status.snapshots) == 701 and "boot" in status.snapshots
