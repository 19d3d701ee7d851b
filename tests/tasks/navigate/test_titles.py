"""A screen a person saves is named for what it shows, on the virtual phone's real screens: the
home screen is "Home screen" (never its first icon), an app's page is "<app> · <heading>"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from inference.perception import Perceiver
from tasks.navigate import to_observation
from tasks.navigate.titles import HOME_SCREEN, saved_screen_title

SETTINGS = "com.android.settings"
MEITUAN = "com.sankuai.meituan"


@pytest.fixture()
def driver(sim: SimServer) -> Iterator[AdbDriver]:
    sim.control.reset("boot")
    phone = AdbDriver(sim.serials[0], port=sim.port)
    try:
        yield phone
    finally:
        phone.close()


def _title(driver: AdbDriver, perceiver: Perceiver, package: str, label: str) -> str:
    screen = perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False).screen
    return saved_screen_title(driver, screen, package, label)


def test_the_home_screen_is_named_so_not_after_its_first_icon(driver: AdbDriver,
                                                             perceiver: Perceiver) -> None:
    assert _title(driver, perceiver, SETTINGS, "Settings") == HOME_SCREEN


def test_an_app_page_is_named_for_its_app_and_heading(driver: AdbDriver,
                                                     perceiver: Perceiver) -> None:
    driver.open_app(SETTINGS)
    title = _title(driver, perceiver, SETTINGS, "Settings")
    assert title.startswith("Settings"), title
    # Another app in front of the sub-task's: named for the app that is in front.
    driver.open_app(MEITUAN)
    other = _title(driver, perceiver, SETTINGS, "Settings")
    assert not other.startswith("Settings") and other != HOME_SCREEN, other
    assert other.split(" · ")[0] == driver.app_label(MEITUAN)
