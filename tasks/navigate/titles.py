"""What a screen a person saved is named: the app in front and the page's heading.

    "<app> · <heading>"        a page of the sub-task's app, or of another app in front
    "Home screen"              the launcher: its texts are app icons, not a page's heading

The heading is the page's own title where it has one (a title view, a toolbar's or action
bar's text), else the first short text from the top that is not the app's own name. A
home screen is never named after its first icon, and its captures are never an answer of
the sub-task's app (:func:`core.models.in_own_app`).
"""

from __future__ import annotations

import re

from core.models import Screen, UIElement
from device_farm.driver import Driver
from device_farm.errors import DeviceError

__all__ = ["HOME_SCREEN", "is_home_screen_package", "page_heading", "saved_screen_title"]

HOME_SCREEN = "Home screen"
_MAX_HEADING = 60
# Android launchers name themselves so (launcher3, nexuslauncher, a vendor's ".home").
_LAUNCHER = re.compile(r"launcher|(^|\.)home($|\.)", re.IGNORECASE)
_TITLE_ID = re.compile(r"(^|[:/_])(title|toolbar_title|action_bar_title)$", re.IGNORECASE)
_BAR_ID = re.compile(r"toolbar|action_bar|app_bar", re.IGNORECASE)


def is_home_screen_package(package: str) -> bool:
    """Whether ``package`` is a launcher (the phone's home screen)."""
    return bool(_LAUNCHER.search(package))


def page_heading(screen: Screen, app_label: str = "") -> str:
    """The page's title: a title view, else a bar's text, else the first short text from the top."""
    texts = [e for e in screen.elements if e.text.strip() and len(e.text) <= _MAX_HEADING]
    texts.sort(key=lambda e: (e.bounds.top, e.bounds.left))
    titled = [e for e in texts if _TITLE_ID.search(e.resource_id)]
    if titled:
        return titled[0].text.strip()
    bars = [e for e in screen.elements if _BAR_ID.search(e.resource_id)]
    in_bar = [e for e in texts if any(_inside(e, bar) for bar in bars) and not e.clickable]
    if in_bar:
        return in_bar[0].text.strip()
    own_name = app_label.casefold()
    rest = [e for e in texts if e.text.strip().casefold() != own_name]
    return rest[0].text.strip() if rest else ""


def saved_screen_title(driver: Driver, screen: Screen, package: str, app_label: str) -> str:
    """The name of a screen a person saved during ``package``'s sub-task (``app_label``)."""
    if screen.package == package:
        front = app_label
    elif is_home_screen_package(screen.package):
        return HOME_SCREEN
    else:
        try:
            front = driver.app_label(screen.package)
        except DeviceError:
            front = screen.package
    heading = page_heading(screen, front)
    return f"{front} · {heading}" if heading and heading != front else front


def _inside(element: UIElement, bar: UIElement) -> bool:
    box, outer = element.bounds, bar.bounds
    return (element.id != bar.id and outer.left <= box.left and box.right <= outer.right
            and outer.top <= box.top and box.bottom <= outer.bottom)
