"""A simulator shared by the sim tests, and small adbutils helpers that read its screens."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import adbutils
import pytest

from device_farm.sim import SimServer
from tests.support.example_apps import example_catalog

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_DIALOG_IDS = ("android:id/parentPanel", "com.android.permissioncontroller:id/grant_dialog")


@pytest.fixture(scope="session")
def sim() -> Iterator[SimServer]:
    with SimServer(phones=2, port=0, seed=7, catalog=example_catalog()) as server:
        yield server


@pytest.fixture()
def device(sim: SimServer) -> adbutils.AdbDevice:
    """Phone 1, reset to its boot snapshot."""
    sim.control.reset("boot")
    sim.control.clear_faults()
    return adbutils.AdbClient("127.0.0.1", sim.port).device(sim.serials[0])


def nodes(d: adbutils.AdbDevice) -> list[dict[str, str]]:
    """Every node of the current dump, as attribute dicts."""
    root = ET.fromstring(d.dump_hierarchy())
    return [dict(n.attrib) for n in root.iter("node")]


def bounds(node: dict[str, str]) -> tuple[int, int, int, int]:
    match = _BOUNDS.match(node["bounds"])
    if match is None:
        raise ValueError(node["bounds"])
    left, top, right, bottom = (int(g) for g in match.groups())
    return left, top, right, bottom


def find(d: adbutils.AdbDevice, *, text: str | None = None, rid: str | None = None) -> dict[str, str] | None:
    for node in nodes(d):
        if (text is None or node["text"] == text) and (rid is None or node["resource-id"].endswith(rid)):
            return node
    return None


def tap_node(d: adbutils.AdbDevice, node: dict[str, str]) -> None:
    left, top, right, bottom = bounds(node)
    d.click((left + right) // 2, (top + bottom) // 2)


def open_app(d: adbutils.AdbDevice, package: str) -> None:
    """Launch ``package`` and close whatever pop-ups it shows first."""
    d.app_start(package)
    for _ in range(3):
        if not any(n["resource-id"] in _DIALOG_IDS for n in nodes(d)):
            return
        d.keyevent("BACK")
