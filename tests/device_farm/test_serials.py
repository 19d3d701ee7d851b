"""Farm serials: host-local adb serials carry the host's name; the name works wherever serials go."""

from __future__ import annotations

import re

import pytest

from deploy.farm import worker_process_name
from device_farm.adb_driver import AdbDriver
from device_farm.health import probe_device
from device_farm.models import DeviceInfo
from device_farm.serials import farm_serial, host_label, is_host_local
from device_farm.sim import SimServer
from droidretriever.api.schemas import SERIAL
from flows.steering import SERIAL_PATTERN
from tasks.worker.device_worker import worker_hostname
from tasks.worker.queues import device_queue


@pytest.mark.parametrize(("adb_serial", "expected"), [
    ("emulator-5554", "farm-a.emulator-5554"),
    ("127.0.0.1:5555", "farm-a.127.0.0.1:5555"),
    ("localhost:5601", "farm-a.localhost:5601"),
    ("R58M123ABC", "R58M123ABC"),  # a USB serial names one phone anywhere
    ("192.168.1.20:5555", "192.168.1.20:5555"),  # so does a phone on the LAN
])
def test_only_host_local_serials_are_qualified(adb_serial: str, expected: str) -> None:
    assert farm_serial(adb_serial, "farm-a") == expected
    assert is_host_local(adb_serial) == (expected != adb_serial)


def test_two_hosts_emulators_get_two_names() -> None:
    assert farm_serial("emulator-5554", host_label("farm-a")) != farm_serial("emulator-5554",
                                                                             host_label("farm-b"))


def test_host_label_is_letters_digits_and_dashes() -> None:
    assert host_label("Build_Box 7") == "Build-Box-7"
    assert re.match(r"^[A-Za-z0-9][A-Za-z0-9-]{0,23}$", host_label(""))  # the machine's name
    assert len(host_label("x" * 100)) == 24


def test_a_qualified_serial_is_valid_in_paths_queues_node_and_file_names() -> None:
    name = farm_serial("emulator-5554", host_label("a-rather-long-farm-host-name"))
    assert re.match(SERIAL, name) and re.match(SERIAL_PATTERN, name)
    assert device_queue(name) == f"device.{name}"
    assert worker_hostname(name).startswith(f"{name}@")
    assert worker_process_name(name) == f"worker-{name}"


def test_the_driver_speaks_the_adb_serial_and_is_named_by_the_farm_serial() -> None:
    with SimServer(phones=1, port=0, seed=7) as sim:
        info = DeviceInfo(serial="farm-a.emulator-5554", adb_serial=sim.serials[0], width=1080,
                          height=2400, adb_port=sim.port)
        driver = AdbDriver.for_device(info)
        try:
            observation = driver.observe()
            assert driver.serial == "farm-a.emulator-5554"
            assert probe_device(driver, driver.address, driver.adb_serial) is None
            assert probe_device(driver, driver.address) is not None  # adb lists no such name
        finally:
            driver.close()
    assert observation.width > 0 and observation.screenshot_png
    assert DeviceInfo(serial="R58M123ABC", width=1080, height=2400).local_serial == "R58M123ABC"
