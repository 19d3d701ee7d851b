"""What the farm needs from the virtual phones: per-phone apps, real labels, login at launch."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lxml import etree

from core.models import Bounds
from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceCommandFailed
from device_farm.sim import APPS_DIR, Catalog, ControlError, SimServer, SimServerError, load_app
from tests.support.example_apps import example_catalog

MEITUAN = "com.sankuai.meituan"
MCDONALDS = "com.mcdonalds.gma.cn"
SETTINGS = "com.android.settings"
GMAIL = "com.google.android.gm"


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    apps = [*example_catalog().apps.values(), load_app(APPS_DIR / "gmail.yaml")]
    catalog = Catalog(apps={app.package: app for app in apps})
    with SimServer(phones=2, port=0, seed=7, catalog=catalog,
                   phone_apps={"emulator-5556": [MCDONALDS, SETTINGS]}) as server:
        yield server


@pytest.fixture()
def phones(sim: SimServer) -> Iterator[tuple[AdbDriver, AdbDriver]]:
    sim.control.clear_faults()
    sim.control.reset("boot")
    drivers = (AdbDriver(sim.serials[0], port=sim.port, timeout_s=5),
               AdbDriver(sim.serials[1], port=sim.port, timeout_s=5))
    yield drivers
    for driver in drivers:
        driver.close()


def test_each_phone_lists_its_own_apps_with_real_labels(phones: tuple[AdbDriver, AdbDriver]) -> None:
    full, small = phones
    assert {app.package for app in small.list_apps()} == {MCDONALDS, SETTINGS}
    assert {MEITUAN, GMAIL} <= {app.package for app in full.list_apps()}
    # Labels come from `dumpsys package` (application-label), apostrophe included.
    assert dict((a.package, a.label) for a in small.list_apps()) == {
        MCDONALDS: "McDonald's", SETTINGS: "Settings"}
    with pytest.raises(DeviceCommandFailed, match="cannot open"):
        small.open_app(MEITUAN)


def test_install_and_uninstall_change_what_a_phone_has(sim: SimServer,
                                                       phones: tuple[AdbDriver, AdbDriver]) -> None:
    full, small = phones
    sim.control.install(sim.serials[1], MEITUAN)
    assert MEITUAN in small.list_packages()
    small.open_app(MEITUAN)
    assert small.focused_app()[0] == MEITUAN
    sim.control.uninstall(sim.serials[1], MEITUAN)
    assert MEITUAN not in small.list_packages()
    assert small.focused_app()[0] != MEITUAN  # the app in front is gone with it
    # The other phone is untouched, and `pm uninstall` works like the control call.
    assert MEITUAN in full.list_packages()
    assert full.shell(f"pm uninstall {MEITUAN}") == "Success"
    assert MEITUAN not in full.list_packages()
    # A reset puts back the apps the phone booted with.
    sim.control.reset("boot")
    assert MEITUAN in full.list_packages() and MEITUAN not in small.list_packages()


def test_bad_app_sets_are_refused_with_a_reason(sim: SimServer) -> None:
    with pytest.raises(ControlError, match="not installed"):
        sim.control.uninstall(sim.serials[1], MEITUAN)
    with pytest.raises(ControlError, match="no app"):
        sim.control.install(sim.serials[1], "com.example.nothing")
    with pytest.raises(SimServerError, match="not in the catalog"):
        SimServer(phones=1, catalog=example_catalog(), phone_apps={"emulator-5554": [GMAIL]})
    with pytest.raises(SimServerError, match="not one of the 1 phones"):
        SimServer(phones=1, catalog=example_catalog(), phone_apps={"emulator-5556": [MEITUAN]})


def test_launching_a_logged_out_app_asks_for_login_then_opens_home(
        sim: SimServer, phones: tuple[AdbDriver, AdbDriver]) -> None:
    driver = phones[0]
    sim.control.set_logged_in(sim.serials[0], GMAIL, False)
    driver.open_app(GMAIL)
    observation = driver.observe()
    assert observation.activity.endswith("AccountSetupActivity")
    root = etree.fromstring(observation.hierarchy_xml.encode())
    assert not root.xpath(f"//node[@resource-id='{GMAIL}:id/conversation_list']")
    next_button = root.xpath(f"//node[@resource-id='{GMAIL}:id/next']")[0]
    driver.tap(Bounds.parse(next_button.get("bounds")).center)
    observation = driver.observe()
    assert observation.activity.endswith("ConversationListActivityGmail")
    assert etree.fromstring(observation.hierarchy_xml.encode()).xpath(
        f"//node[@resource-id='{GMAIL}:id/conversation_list']")
