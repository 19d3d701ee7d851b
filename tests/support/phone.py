"""What a person sees on a virtual phone: its elements, found by label, in the phone's pixels."""

from __future__ import annotations

from collections.abc import Callable

from core.models import Point, UIElement
from device_farm.adb_driver import AdbDriver
from inference.perception import parse_hierarchy


def find_on_screen(serial: str, port: int, wanted: Callable[[UIElement], bool],
                   what: str) -> tuple[Point, tuple[int, int]]:
    """The centre of the first element ``wanted`` accepts, and the screen's size."""
    driver = AdbDriver(serial, port=port)
    try:
        seen = driver.observe()
    finally:
        driver.close()
    elements = parse_hierarchy(seen.hierarchy_xml, width=seen.width, height=seen.height).elements
    found = next((e for e in elements if wanted(e)), None)
    assert found is not None, f"{serial} shows no {what}: {[e.label for e in elements]}"
    return found.bounds.center, (seen.width, seen.height)
