"""The ADB server as adbutils sees it: devices, shell, sync, screenshots, dumpsys."""

from __future__ import annotations

import io
import struct
import xml.etree.ElementTree as ET

import adbutils
import pytest
from PIL import Image

from device_farm.sim import SimServer
from tests.support.example_apps import example_catalog


def test_device_list_and_extended_listing(sim: SimServer) -> None:
    client = adbutils.AdbClient("127.0.0.1", sim.port)
    assert client.server_version() == 41
    assert [d.serial for d in client.device_list()] == ["emulator-5554", "emulator-5556"]
    infos = client.list(extended=True)
    assert infos[1].tags["model"] == "MI_8"
    assert infos[0].tags["transport_id"] == "1"


def test_shell_round_trips_and_exit_codes(device: adbutils.AdbDevice) -> None:
    assert device.shell("echo hello world") == "hello world"
    assert device.shell(["echo", "a;b", "&&"]) == "a;b &&"
    result = device.shell2("nosuchcmd --flag")
    assert result.returncode == 127
    assert result.output.strip() == "/system/bin/sh: nosuchcmd: not found"
    v2 = device.shell2("cat /nope", v2=True)
    assert v2.returncode == 1
    assert "No such file or directory" in v2.stderr
    assert device.shell("false || echo fallback; true && echo chained") == "fallback\nchained"
    assert device.getprop("ro.build.version.sdk") == "34"


def test_window_size_rotation_and_density(sim: SimServer) -> None:
    client = adbutils.AdbClient("127.0.0.1", sim.port)
    assert tuple(client.device(sim.serials[0]).window_size()) == (1080, 2340)
    assert tuple(client.device(sim.serials[1]).window_size()) == (1080, 2244)
    assert client.device(sim.serials[0]).shell("wm density") == "Physical density: 440"


def test_sync_push_stat_list_pull(device: adbutils.AdbDevice, tmp_path: object) -> None:
    payload = "数据 data".encode() * 30000  # several 64 KiB chunks
    assert device.sync.push(payload, "/data/local/tmp/blob.bin") == len(payload)
    assert device.sync.stat("/data/local/tmp/blob.bin").size == len(payload)
    assert "blob.bin" in [f.path for f in device.sync.list("/data/local/tmp")]
    assert device.sync.read_bytes("/data/local/tmp/blob.bin") == payload
    with pytest.raises(adbutils.AdbError):
        device.sync.read_bytes("/sdcard/missing.txt")


def test_screencap_png_and_raw_header(device: adbutils.AdbDevice) -> None:
    image = device.screenshot(error_ok=False)
    assert image.size == (1080, 2340)
    raw = device.shell("screencap", encoding=None)
    width, height, fmt, _colorspace = struct.unpack("<IIII", raw[:16])
    assert (width, height, fmt) == (1080, 2340, 1)
    assert len(raw) == 16 + width * height * 4
    png = device.shell("screencap -p", encoding=None)
    assert Image.open(io.BytesIO(png)).size == (1080, 2340)
    device.shell("screencap -p /sdcard/s.png")
    assert device.sync.read_bytes("/sdcard/s.png") == png


def test_dump_is_android_xml_and_app_current_parses(device: adbutils.AdbDevice) -> None:
    device.app_start("com.android.settings")
    assert device.app_current().package == "com.android.settings"
    xml = device.dump_hierarchy()
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">")
    root = ET.fromstring(xml)
    first = next(root.iter("node"))
    assert list(first.attrib) == [
        "index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked",
        "clickable", "enabled", "focusable", "focused", "scrollable", "long-clickable", "password",
        "selected", "bounds",
    ]
    assert device.shell("uiautomator dump") == "UI hierchary dumped to: /sdcard/window_dump.xml"
    assert device.shell("cat /sdcard/window_dump.xml").startswith("<?xml")
    assert "mCurrentFocus=Window{" in device.shell("dumpsys window | grep mCurrentFocus")


def test_packages_monkey_force_stop(device: adbutils.AdbDevice) -> None:
    packages = device.list_packages()
    assert {"com.sankuai.meituan", "com.mcdonalds.gma.cn", "com.android.settings", "android"} <= set(packages)
    assert device.list_packages(["-3"]) == ["com.android.settings", "com.mcdonalds.gma.cn", "com.sankuai.meituan"]
    out = device.shell("monkey -p com.mcdonalds.gma.cn -c android.intent.category.LAUNCHER 1")
    assert "Events injected: 1" in out
    assert device.app_current().package == "com.mcdonalds.gma.cn"
    device.app_stop("com.mcdonalds.gma.cn")
    assert device.app_current().package == "com.android.launcher3"
    missing = device.shell2("monkey -p com.nope -c android.intent.category.LAUNCHER 1")
    assert "No activities found" in missing.output
    started = device.shell("am start -n com.android.settings/.applications.ManageApplications")
    assert started == "Starting: Intent { cmp=com.android.settings/.applications.ManageApplications }"
    assert device.app_current().activity.endswith("ManageApplications")


def test_a_second_hosts_phones_are_numbered_after_the_first() -> None:
    """``first_index`` (DROIDRETRIEVER_SIM__FIRST_INDEX): farm hosts sharing a Redis differ in serials."""
    with SimServer(phones=2, port=0, seed=7, catalog=example_catalog(), first_index=2) as server:
        assert server.serials == ["emulator-5558", "emulator-5560"]
        listed = [d.serial for d in adbutils.AdbClient("127.0.0.1", server.port).device_list()]
        assert listed == ["emulator-5558", "emulator-5560"]
