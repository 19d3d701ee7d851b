"""Replay phones: DroidBot recordings of real apps served as installed apps of virtual phones.

    apps = load_recordings([Path("../shared/data/droidbot-real")])
    with SimServer(phones=1, replays=apps) as sim: ...   # + one replay phone per screen size

A recorded app shows its recorded screenshots and views; an action that
matches a recorded event moves to the recorded next screen, anything else
stays put and counts as off the recorded graph (:mod:`player`). Each
phone's trail of actions and outcomes is in the control API's status.

- :mod:`graph`   screens, edges, kinds of screens, settling;
- :mod:`build`   recordings -> graphs (how holes in real recordings are bridged);
- :mod:`hit`     which view a touch reaches (Android's dispatch order);
- :mod:`player`  what an action does; :mod:`cursor` where a phone is, and its trail;
- :mod:`output`  the screenshot and dump a driver reads;
- :mod:`apps`    recorded apps as catalog entries, replay phones by screen size.
"""

from __future__ import annotations

from device_farm.sim.replay.apps import group_by_display, replay_app_spec
from device_farm.sim.replay.build import find_recording_folders, load_recordings
from device_farm.sim.replay.cursor import Outcome, ReplayCursor, ReplayStep
from device_farm.sim.replay.graph import EdgeKind, ReplayApp, ReplayEdge, ReplayScreen, ViewKey
from device_farm.sim.replay.player import ReplayPlayer, swipe_direction

__all__ = [
    "EdgeKind",
    "Outcome",
    "ReplayApp",
    "ReplayCursor",
    "ReplayEdge",
    "ReplayPlayer",
    "ReplayScreen",
    "ReplayStep",
    "ViewKey",
    "find_recording_folders",
    "group_by_display",
    "load_recordings",
    "replay_app_spec",
    "swipe_direction",
]
