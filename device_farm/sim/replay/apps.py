"""Recorded apps as installed apps: an app entry for the launcher, ``pm`` and ``dumpsys``, and the phone.

A recorded app is installed like any catalog app (its :class:`AppSpec` gives
the launcher icon, the package list and the label); what it shows comes from
the recording. A recording's screen size is a phone's: recordings of one size
share a replay phone, whose other apps are the simulator's catalog.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from device_farm.sim.layout import Display
from device_farm.sim.replay.graph import ReplayApp
from device_farm.sim.spec import AppSpec, ScreenSpec

__all__ = ["RECORDED_SCREEN", "group_by_display", "replay_app_spec"]

RECORDED_SCREEN = "recorded"  # the one screen id of a recorded app's entry: the recording decides the rest


def replay_app_spec(app: ReplayApp) -> AppSpec:
    """The catalog entry of a recorded app (label, package, launcher icon)."""
    colour = "#" + hashlib.blake2b(app.package.encode(), digest_size=3).hexdigest()
    launch = app.screens[app.launch].activity or ".MainActivity"
    # One recording is one install: its version names it, so what is learnt of it (an app map)
    # is kept apart from another recording of the app at another screen size.
    return AppSpec(package=app.package, label=app.label, icon_color=colour, theme_color=colour,
                   home=RECORDED_SCREEN, screens={RECORDED_SCREEN: ScreenSpec(activity=launch)},
                   storage="recorded", version=f"recording-{app.width}x{app.height}")


def _display(width: int, height: int) -> Display:
    # 1440 px wide phones are ~560 dpi, 1080 px ones ~420 dpi: the same 411 dp width
    return Display(width, height, round(width * 7 / 18))


def group_by_display(apps: Sequence[ReplayApp]) -> list[tuple[Display, dict[str, ReplayApp]]]:
    """Recorded apps by screen size (largest first): one replay phone each."""
    groups: dict[tuple[int, int], dict[str, ReplayApp]] = {}
    for app in apps:
        groups.setdefault((app.width, app.height), {})[app.package] = app
    return [(_display(w, h), groups[(w, h)]) for w, h in sorted(groups, key=lambda s: -s[0] * s[1])]
