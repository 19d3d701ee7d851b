"""AdbDriver against the virtual phones: observe, act, type (CJK too), errors on faults."""

from __future__ import annotations

from collections.abc import Iterator

import cv2
import numpy as np
import pytest
from lxml import etree

from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceCommandFailed, DeviceLost, InputNotApplied
from device_farm.models import Key
from device_farm.sim import SimServer
from droidretriever.models import Bounds, ScrollDirection
from tests.farm.harness import example_catalog

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
    assert image.shape == (2340, 1080, 3)
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
