"""Build :class:`ReplayApp` graphs from a DroidBot recording folder (``states/``, ``events/``).

Real recordings have holes, and the rules that bridge them are few and said here:

- **Which recording of a screen**: a ``state_str`` recorded several times (and on
  two phones of different sizes) is resolved per event by time: the start is
  the latest recording at or before the event, the stop the earliest after it.
- **Sessions** start at a launch (``intent``) or a kill (``kill_app``); nothing is
  bridged across them.
- **An event whose next screen was not saved** leads to the screen the next
  event of its session started from; one whose own screen was not saved
  started from the screen the previous event led to.
- **Settling**: a screen nobody acted on that was followed, with no event, by
  another screen of the same app (a splash, a loading page) moves on by itself.
  After text entry, the next screen is where ENTER (submit) leads.
- **Unrecorded scrolls**: when the next event of a session starts on another
  screen of the same activity than the last one led to, and the two show one
  scrollable view whose shared views moved (AutoDroid scrolled through each page
  to read it and recorded no event), the move is a scroll, both ways.
- **Another app**: an event that opens another recorded app of the same screen
  size (the camera's last photo opens the gallery) goes on into that app's
  recorded screens and events.
- **Launch**: the screen most sessions of the app started acting on (ties: the
  earliest); without sessions, the first screen recorded.
- **One recording per app**: a package (at one size) recorded in several folders
  (DroidTask's app folders record the apps their tasks open) is replayed from the
  folder that recorded the most events of it.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from core.models import Bounds
from core.recordings import (
    DroidbotEvent,
    DroidbotState,
    DroidbotTransition,
    RecordingError,
    load_droidbot_state,
    load_droidbot_transition,
)
from device_farm.sim.errors import SimServerError
from device_farm.sim.replay.graph import EdgeKind, ReplayApp, ReplayEdge, ReplayScreen, ViewKey

__all__ = ["find_recording_folders", "load_recordings"]

_BOUNDARIES = ("intent", "kill_app")
_SYSTEM = ("android", "com.android.systemui", "com.android.launcher3", "com.google.android.apps.nexuslauncher",
           "com.android.permissioncontroller", "com.google.android.inputmethod.latin",
           "com.google.android.packageinstaller", "")
_EDGE_KINDS = {"click": EdgeKind.TAP, "touch": EdgeKind.TAP, "long_click": EdgeKind.LONG_PRESS,
               "set_text": EdgeKind.TEXT, "scroll": EdgeKind.SCROLL, "key": EdgeKind.KEY}
_GENERIC_WORDS = frozenset({"com", "org", "net", "jp", "cn", "io", "android", "app", "apps", "mobile", "client",
                            "pro"})


def find_recording_folders(root: Path) -> tuple[Path, ...]:
    """``root`` when it holds ``states/``, else every sub-folder that does (sorted)."""
    if (root / "states").is_dir():
        return (root,)
    found = tuple(sorted(p for p in root.iterdir() if (p / "states").is_dir())) if root.is_dir() else ()
    if not found:
        raise SimServerError(f"no DroidBot recording under {root}",
                             hint="point at a folder with states/ and events/ (or a folder of such folders)")
    return found


@dataclass
class _Recorded:
    """One state file, by time."""

    tag: str
    key: str
    state: DroidbotState
    path: Path


@dataclass
class _Event:
    transition: DroidbotTransition
    start: str | None  # resolved screen keys
    stop: str | None

    @property
    def event(self) -> DroidbotEvent:
        return self.transition.event

    @property
    def boundary(self) -> bool:
        return self.event.event_type in _BOUNDARIES


class _Index:
    """The folder's screens, and which recording of a ``state_str`` an event saw."""

    def __init__(self, folder: Path) -> None:
        self.screens: dict[str, ReplayScreen] = {}
        self.times: dict[str, list[tuple[str, str]]] = {}  # state_str -> [(tag, key)], by tag
        for path in sorted((folder / "states").glob("state_*.json")):
            try:
                state = load_droidbot_state(path)
            except RecordingError as exc:
                raise SimServerError(str(exc), hint=exc.hint) from exc
            key = _screen_key(state)
            if key not in self.screens:
                self.screens[key] = ReplayScreen(
                    key=key, state_str=state.state_str, content_free=state.state_str_content_free,
                    package=state.package, activity=state.activity, width=state.width,
                    height=state.height, path=path)
                self.screens[key].__dict__["state"] = state  # already read: keep it
            self.times.setdefault(state.state_str, []).append((state.tag, key))

    def resolve(self, state_str: str, tag: str, *, after: bool) -> str | None:
        recorded = self.times.get(state_str)
        if not recorded:
            return None
        tags = [t for t, _ in recorded]
        if after:
            index = bisect.bisect_left(tags, tag)
            return recorded[min(index, len(recorded) - 1)][1]
        index = bisect.bisect_right(tags, tag) - 1
        return recorded[max(index, 0)][1]

    def same_app(self, a: str | None, b: str | None) -> bool:
        if a is None or b is None:
            return False
        sa, sb = self.screens[a], self.screens[b]
        return sa.package == sb.package and (sa.width, sa.height) == (sb.width, sb.height)


def _screen_key(state: DroidbotState) -> str:
    """``<state_str>.<layout>@<w>x<h>``: DroidBot's state string ignores where views are, so a
    scrolled page has the state string of the unscrolled one; the layout hash tells them apart."""
    layout = hashlib.blake2b(digest_size=3)
    for view in state.visible_views():
        layout.update(str(view.bounds).encode())
    return f"{state.state_str}.{layout.hexdigest()}@{state.width}x{state.height}"


def _load_events(folder: Path, index: _Index) -> list[_Event]:
    events: list[_Event] = []
    for path in sorted((folder / "events").glob("event_*.json")) if (folder / "events").is_dir() else ():
        try:
            transition = load_droidbot_transition(path)
        except RecordingError as exc:
            raise SimServerError(str(exc), hint=exc.hint) from exc
        events.append(_Event(transition,
                             index.resolve(transition.start_state, transition.tag, after=False),
                             index.resolve(transition.stop_state, transition.tag, after=True)))
    return sorted(events, key=lambda e: e.transition.tag)


def _bridge(events: list[_Event], index: _Index) -> list[tuple[_Event, str | None, str | None]]:
    """Each event with its start and stop screens, holes bridged inside a session.

    A missing next screen is never bridged to a screen of the kind sessions start on
    (an app's first page): that is a person restarting the app unrecorded, not where
    the event led (BACK aside, which may well lead there).
    """
    first_kinds = {index.screens[e.start].kind for e, prev in zip(events[1:], events, strict=False)
                   if prev.boundary and not e.boundary and e.start is not None}
    out = []
    for i, event in enumerate(events):
        start, stop = event.start, event.stop
        if not event.boundary:
            after = events[i + 1] if i + 1 < len(events) else None
            before = events[i - 1] if i > 0 else None
            restarted = after is not None and after.start is not None and event.event.event_type != "key" \
                and index.screens[after.start].kind in first_kinds
            if stop is None and after is not None and not after.boundary and not restarted \
                    and index.same_app(start, after.start):
                stop = after.start
            if start is None and before is not None and not before.boundary and index.same_app(before.stop, stop):
                start = before.stop
        out.append((event, start, stop))
    return out


def _edge(event: DroidbotEvent, start: ReplayScreen, stop: str, tag: str) -> ReplayEdge | None:
    kind = _EDGE_KINDS.get(event.event_type)
    if kind is None:
        return None
    if kind is EdgeKind.KEY:
        return ReplayEdge(kind, start.key, stop, tag, key_name=(event.name or "").upper())
    if event.view is None:
        return None
    view = ViewKey.of(event.view)
    receiver = _receiver(start.state, event.view.temp_id, view) if kind is EdgeKind.TAP else view
    return ReplayEdge(kind, start.key, stop, tag, view=view, receiver=receiver,
                      direction=(event.direction or "").upper())


def _receiver(state: DroidbotState, temp_id: int, view: ViewKey) -> ViewKey:
    """The view a tap on ``view`` reaches: itself, else its nearest ancestor that takes taps.

    A view takes a tap when it is clickable, long-clickable, checkable (a check box
    whose row is clickable toggles itself: :mod:`hit` dispatches so) or editable.
    """
    by_id = {v.temp_id: v for v in state.views}
    current = by_id.get(temp_id)
    if current is None or ViewKey.of(current).content_free != view.content_free:
        return view
    while current is not None:
        if current.clickable or current.long_clickable or current.checkable or current.editable:
            return ViewKey.of(current)
        current = by_id.get(current.parent)
    return view


def _label(package: str, events: list[_Event], index: _Index) -> str:
    """The launcher label a recording shows for ``package``, else a word of the package name."""
    for event in events:
        view = event.event.view
        if view is None or "launcher" not in (view.package or "") or view.package == package or not view.text:
            continue  # a launcher is another app: a launcher app's own buttons name nothing
        stop = index.screens.get(event.stop or "")
        if stop is not None and stop.package == package:
            return view.text
    words = [w for w in re.split(r"[._]", package) if w and w.lower() not in _GENERIC_WORDS]
    return words[-1].capitalize() if words else package


def _shift(before: DroidbotState, after: DroidbotState, box: Bounds) -> tuple[int, int] | None:
    """How far the labelled views shown in ``box`` on both screens moved (median), None when none is shared."""
    def placed(state: DroidbotState) -> dict[str, Bounds]:
        found: dict[str, list[Bounds]] = {}
        for view in state.visible_views():
            if (view.text or view.content_description) and box.encloses(view.box):
                found.setdefault(ViewKey.of(view).signature + (view.content_description or ""), []).append(view.box)
        return {k: v[0] for k, v in found.items() if len(v) == 1}  # a label shown once: the same view

    old, new = placed(before), placed(after)
    shared = [(new[k].top - old[k].top, new[k].left - old[k].left) for k in old.keys() & new.keys()]
    if not shared:
        return None
    return statistics.median_low(dy for dy, _ in shared), statistics.median_low(dx for _, dx in shared)


def _scroll_edges(start: ReplayScreen, stop: ReplayScreen, tag: str) -> list[ReplayEdge]:
    """The scroll from ``start`` to ``stop`` and back, when one scrollable view moved its content."""
    if start.activity != stop.activity:
        return []
    lists = [(a, b) for a in start.state.visible_views() if a.scrollable
             for b in stop.state.visible_views() if b.scrollable and ViewKey.of(a).same_kind(ViewKey.of(b))]
    for a, b in sorted(lists, key=lambda pair: -pair[0].box.area):
        moved = _shift(start.state, stop.state, a.box)
        if moved is None or moved == (0, 0):
            continue
        dy, dx = moved
        # DroidBot names a scroll by where the content comes from: moved up = DOWN.
        there, back = (("DOWN", "UP") if dy < 0 else ("UP", "DOWN")) if abs(dy) >= abs(dx) else \
            (("RIGHT", "LEFT") if dx < 0 else ("LEFT", "RIGHT"))
        return [ReplayEdge(EdgeKind.SCROLL, start.key, stop.key, tag, view=ViewKey.of(a), direction=there),
                ReplayEdge(EdgeKind.SCROLL, stop.key, start.key, tag, view=ViewKey.of(b), direction=back)]
    return []


def _add_scrolls(events: list[_Event], apps: dict[tuple[str, int, int], ReplayApp], index: _Index) -> None:
    for event, after in pairwise(events):
        if event.boundary or after.boundary or event.stop is None or after.start is None:
            continue
        if event.stop == after.start or not index.same_app(event.stop, after.start):
            continue
        start, stop = index.screens[event.stop], index.screens[after.start]
        app = apps.get((start.package, start.width, start.height))
        if app is None:
            continue
        for edge in _scroll_edges(start, stop, after.transition.tag):
            recorded = app.edges.setdefault(edge.start, [])
            if not any(e.kind is EdgeKind.SCROLL and e.direction == edge.direction for e in recorded):
                recorded.append(edge)
                app.screens[edge.start], app.screens[edge.stop] = index.screens[edge.start], index.screens[edge.stop]


def _add_opened_apps(apps: dict[tuple[str, int, int], ReplayApp]) -> None:
    """Each app's graph goes on through the screens of other recorded apps it opens."""
    for group, app in apps.items():
        todo = [k for k, s in app.screens.items() if (s.package, s.width, s.height) != group]
        seen = set(todo)
        while todo:
            key = todo.pop()
            screen = app.screens[key]
            other = apps.get((screen.package, screen.width, screen.height))
            if other is None:
                continue
            for edge in other.edges.get(key, ()):
                if edge not in app.edges.setdefault(key, []):
                    app.edges[key].append(edge)
                app.screens.setdefault(edge.stop, other.screens[edge.stop])
                if edge.stop not in seen:
                    seen.add(edge.stop)
                    todo.append(edge.stop)
            for table in ("settles", "submits"):
                after = getattr(other, table).get(key)
                if after is not None:
                    getattr(app, table).setdefault(key, after)
                    app.screens.setdefault(after, other.screens[after])
                    if after not in seen:
                        seen.add(after)
                        todo.append(after)


def _build_folder(folder: Path) -> list[ReplayApp]:
    index = _Index(folder)
    events = _load_events(folder, index)
    bridged = _bridge(events, index)
    acted = {start for _, start, _ in bridged if start is not None}
    apps: dict[tuple[str, int, int], ReplayApp] = {}
    launches: dict[tuple[str, int, int], Counter[str]] = {}
    for screen in index.screens.values():
        group = (screen.package, screen.width, screen.height)
        if screen.package in _SYSTEM or group in apps:
            continue
        apps[group] = ReplayApp(package=screen.package, label=_label(screen.package, events, index),
                                width=screen.width, height=screen.height, screens={}, launch=screen.key)
    for i, (event, start, stop) in enumerate(bridged):
        first = start is not None and not event.boundary and (i == 0 or bridged[i - 1][0].boundary)
        if first and start is not None:
            s = index.screens[start]
            launches.setdefault((s.package, s.width, s.height), Counter())[start] += 1
        if event.boundary or start is None or stop is None:
            continue
        s, t = index.screens[start], index.screens[stop]
        app = apps.get((s.package, s.width, s.height))
        if app is None or (t.width, t.height) != (s.width, s.height) or t.package in _SYSTEM:
            continue  # the launcher, another size: leaving the app is BACK's or HOME's job
        edge = _edge(event.event, s, stop, event.transition.tag)
        if edge is not None:
            app.edges.setdefault(start, []).append(edge)
            app.screens[start], app.screens[stop] = s, t
    _add_settles(events, apps, index, acted)
    _add_scrolls(events, apps, index)
    _add_opened_apps(apps)
    for group, app in apps.items():
        for key, screen in index.screens.items():
            if (screen.package, screen.width, screen.height) == group:
                app.screens.setdefault(key, screen)
        counted = launches.get(group)
        if counted:
            # most sessions, then the earliest recorded: deterministic
            order = {k: n for n, k in enumerate(index.screens)}
            app.launch = min(counted, key=lambda k: (-counted[k], order[k]))
        app.launch = app.settle(app.launch)
    return list(apps.values())


def _add_settles(events: list[_Event], apps: dict[tuple[str, int, int], ReplayApp], index: _Index,
                 acted: set[str]) -> None:
    settles: dict[str, Counter[str]] = {}
    submits: dict[str, Counter[str]] = {}
    for event, after in pairwise(events):
        if event.event.event_type == "kill_app" or after.boundary:
            continue
        shown, next_start = event.stop, after.start
        if shown is None or next_start is None or shown == next_start or not index.same_app(shown, next_start):
            continue
        if event.event.event_type == "set_text":  # typed, then the next screen: ENTER's doing
            submits.setdefault(shown, Counter())[next_start] += 1
        elif shown not in acted:
            settles.setdefault(shown, Counter())[next_start] += 1
    for table, counted in ((settles, "settles"), (submits, "submits")):
        for key, targets in table.items():
            screen = index.screens[key]
            app = apps.get((screen.package, screen.width, screen.height))
            if app is None:
                continue
            target = targets.most_common(1)[0][0]
            getattr(app, counted)[key] = target
            app.screens[key], app.screens[target] = screen, index.screens[target]


def _own_events(app: ReplayApp) -> int:
    """Recorded events on the app's own screens (not on those of the apps it opens)."""
    return sum(len(edges) for key, edges in app.edges.items() if app.screens[key].package == app.package)


def load_recordings(roots: Iterable[Path]) -> tuple[ReplayApp, ...]:
    """Every recorded app (one per package and screen size) under ``roots``, sorted by package.

    A package recorded at one size in several folders is replayed from the folder
    that recorded the most of its events (the first of equals).
    """
    apps: dict[tuple[str, int, int], ReplayApp] = {}
    for root in roots:
        for folder in find_recording_folders(root):
            for app in _build_folder(folder):
                group = (app.package, app.width, app.height)
                if group not in apps or _own_events(app) > _own_events(apps[group]):
                    apps[group] = app
    return tuple(sorted(apps.values(), key=lambda a: (a.package, -a.width * a.height)))
