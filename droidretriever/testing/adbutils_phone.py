"""Observe a phone with stock adbutils calls only, as a plain device driver would.

Perception's tests and benchmark use it to see the simulator's output through
adbutils itself, apart from the farm's AdbDriver fast path.
"""

from __future__ import annotations

import adbutils

from inference.perception import Observation

__all__ = ["observe_with_adbutils"]


def observe_with_adbutils(device: adbutils.AdbDevice, step: int) -> Observation:
    """``screencap -p``, ``uiautomator dump``, the focused app and the screen size."""
    png = device.shell("screencap -p", encoding=None)
    xml = device.dump_hierarchy()
    current = device.app_current()
    size = device.window_size()
    return Observation(
        serial=device.serial or "", step=step, package=current.package,
        activity=current.activity, width=size.width, height=size.height,
        screenshot_png=png, hierarchy_xml=xml,
    )
