"""AdbDriver against the virtual phones: observe, act, type (CJK too), errors on faults."""

from __future__ import annotations

from collections.abc import Iterator

import cv2
import numpy as np
import pytest
from lxml import etree

from core.models import Bounds, ScrollDirection
from device_farm.adb_client import NoSpawnAdbClient
from device_farm.adb_driver import AdbDriver
from device_farm.adb_shell import PhoneShell
from device_farm.errors import DeviceCommandFailed, DeviceLost, InputNotApplied
from device_farm.models import Key
from device_farm.sim import SimServer
from tests.support.example_apps import example_catalog

MEITUAN = "com.sankuai.meituan"


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(phones=1, port=0, seed=7, catalog=example_catalog()) as server:
        yield server


@pytest.fixture()
def driver(sim: SimServer) -> Iterator[AdbDriver]:
    sim.control.clear_faults()
    sim.control.reset("boot")
    drv = AdbDriver(sim.serials[0], port=sim.port, timeout_s=5)
    yield drv
    drv.close()


def _node(xml: str, xpath: str) -> etree._Element:
    nodes = etree.fromstring(xml.encode()).xpath(xpath)
    assert nodes, f"no node matches {xpath}"
    return nodes[0]


def _dismiss_dialogs(driver: AdbDriver) -> str:
    xml = driver.observe().hierarchy_xml
    for label in ("关闭", "Close"):
        close = etree.fromstring(xml.encode()).xpath(f"//node[@text='{label}']")
        if close:
            driver.tap(Bounds.parse(close[0].get("bounds")).center)
            return driver.observe().hierarchy_xml
    return xml


def test_observe_matches_what_the_phone_shows(driver: AdbDriver) -> None:
    driver.open_app(MEITUAN)
    observation = driver.observe()
    assert (observation.package, observation.width, observation.height) == (MEITUAN, 1080, 2340)
    assert observation.activity
    image = cv2.imdecode(np.frombuffer(observation.screenshot_png, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape == (2340, 1080, 3)
    assert _node(observation.hierarchy_xml, "//node[@resource-id='com.sankuai.meituan:id/search_edit']") is not None
    assert observation.timings.total_ms > 0 and observation.timings.encode_ms > 0
    assert driver.list_packages()[0] == "android" and MEITUAN in driver.list_packages()
    assert driver.app_label(MEITUAN)
    assert driver.model() and driver.screen_size() == (1080, 2340)


def test_typing_cjk_lands_and_is_verified(driver: AdbDriver) -> None:
    driver.force_stop(MEITUAN)
    driver.open_app(MEITUAN)
    xml = _dismiss_dialogs(driver)
    field = _node(xml, "//node[@resource-id='com.sankuai.meituan:id/search_edit']")
    driver.tap(Bounds.parse(field.get("bounds")).center)
    entry = driver.input_text("巨无霸 Big Mac")
    assert entry.landed and "巨无霸 Big Mac" in entry.field_text
    driver.key(Key.ENTER)
    driver.scroll(ScrollDirection.DOWN, 0.5)
    driver.key(Key.BACK)


def test_text_without_a_focused_field_is_reported(driver: AdbDriver) -> None:
    driver.key(Key.HOME)
    with pytest.raises(InputNotApplied, match="no focused text field"):
        driver.input_text("hello")


def test_unknown_app_and_dropped_connection(sim: SimServer, driver: AdbDriver) -> None:
    with pytest.raises(DeviceCommandFailed, match="cannot open"):
        driver.open_app("com.example.not.installed")
    sim.control.drop_connections(sim.serials[0], count=50)
    with pytest.raises(DeviceLost):
        driver.observe()
    sim.control.clear_faults()
    driver.ping()


def test_phone_is_addressed_by_transport_id_and_found_again_after_reconnecting(
        sim: SimServer) -> None:
    serial = sim.serials[0]
    shell = PhoneShell(NoSpawnAdbClient("127.0.0.1", sim.port), serial, timeout_s=5)
    assert shell.run_text("echo ok", "ping") == "ok"
    assert shell.transport_id == sim.farm.devices[serial].transport_id
    # A phone that reconnects (USB replugged, Wi-Fi adb back) gets a new transport id;
    # the shell is refused under the old one, looks the phone up again and carries on.
    device = sim.farm.devices[serial]
    old_id = device.transport_id
    device.transport_id = old_id + 100
    try:
        assert shell.run_text("echo again", "ping") == "again"
        assert shell.transport_id == old_id + 100
    finally:
        device.transport_id = old_id


def test_hierarchy_is_read_in_one_call_without_a_file(driver: AdbDriver) -> None:
    driver.shell("rm -f /data/local/tmp/uidump.xml")
    driver.open_app(MEITUAN)
    xml = driver.observe().hierarchy_xml
    assert xml.startswith("<?xml") and xml.endswith("</hierarchy>")
    # `uiautomator dump /dev/tty` printed it: the file fallback was never needed.
    assert "uidump.xml" not in driver.shell("ls /data/local/tmp")


def test_an_offline_phone_is_lost_whatever_its_transport(sim: SimServer,
                                                         driver: AdbDriver) -> None:
    driver.ping()
    sim.control.set_offline(sim.serials[0], True)
    with pytest.raises(DeviceLost, match="offline"):
        driver.ping()
    sim.control.set_offline(sim.serials[0], False)
    driver.ping()
