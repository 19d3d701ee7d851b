"""One virtual phone: state, frames (cached), screenshots, dumps and data sources.

The gestures (tap, swipe, keys, text, app start) live in
:mod:`device_farm.sim.gestures`; this module owns what the phone *shows*.
Every state change calls :meth:`Phone.touch`, which invalidates the cached
frame, PNG and XML, so an unchanged screen is never drawn twice.
"""

from __future__ import annotations

import copy
import io
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from PIL import Image
from rapidfuzz import fuzz, utils

from device_farm.sim.catalog import Catalog
from device_farm.sim.clock import SimClock
from device_farm.sim.frame import Frame, FrameInputs, compose_frame
from device_farm.sim.hierarchy import dump_hierarchy
from device_farm.sim.layout import Display
from device_farm.sim.render import render_frame
from device_farm.sim.replay.cursor import Outcome, ReplayCursor
from device_farm.sim.replay.graph import ReplayApp
from device_farm.sim.replay.output import replay_png, replay_raw, replay_xml
from device_farm.sim.replay.player import ReplayPlayer
from device_farm.sim.spec import AppSpec, Record, Widget
from device_farm.sim.state import Page, PhoneState
from device_farm.sim.template import Scope, apply_variation, is_on_date, is_visible_on, resolve_day

__all__ = ["DEVICE_DIRS", "Phone", "PhoneIdentity"]

DEVICE_DIRS = frozenset({"/", "/sdcard", "/sdcard/Download", "/data", "/data/local", "/data/local/tmp"})
_RAW_FORMAT_RGBA_8888 = 1
_COLORSPACE_SRGB = 1


@dataclass(frozen=True)
class PhoneIdentity:
    serial: str
    model: str = "Pixel 7"
    display: Display = Display()  # noqa: RUF009  # frozen, so one shared default is safe
    seed: int = 7


class Phone:
    """A virtual phone. Not thread-safe: the server's event loop is its only user."""

    def __init__(self, identity: PhoneIdentity, catalog: Catalog, available: Catalog | None = None,
                 replays: Mapping[str, ReplayApp] | None = None) -> None:
        self.identity = identity
        self.catalog = catalog  # the apps installed on this phone
        self.available = available or catalog  # what `install` can add (the simulator's whole catalog)
        self.replays = dict(replays or {})  # recorded apps (their entries are in the catalog too)
        self.clock = SimClock()
        self.state = self._initial_state()
        self._version = 0
        self._cache_key: tuple[object, ...] | None = None
        self._frame: Frame | None = None
        self._png: bytes | None = None
        self._raw: bytes | None = None
        self._xml: str | None = None
        self._replay_cache: dict[str, tuple[int, bytes]] = {}  # png / raw -> (version, bytes)
        self.snapshots: dict[str, tuple[PhoneState, float, Catalog]] = {}
        self.save_snapshot("boot")

    # ------------------------------------------------------------------ state

    def _initial_state(self) -> PhoneState:
        state = PhoneState()
        for app in self.catalog.apps.values():
            state.logged_in[app.package] = app.logged_in
        return state

    @property
    def serial(self) -> str:
        return self.identity.serial

    @property
    def display(self) -> Display:
        return self.identity.display

    def touch(self) -> None:
        """Record that the state changed (drops cached frames)."""
        self._version += 1

    def save_snapshot(self, name: str) -> None:
        """Keep a copy of the whole state (clock and installed apps too) under ``name``."""
        self.snapshots[name] = (copy.deepcopy(self.state), self.clock.state(), self.catalog)

    def restore_snapshot(self, name: str) -> bool:
        """Put back snapshot ``name``; False when there is none by that name."""
        saved = self.snapshots.get(name)
        if saved is None:
            return False
        self.state = copy.deepcopy(saved[0])
        self.clock.restore(saved[1])
        self.catalog = saved[2]
        self.touch()
        return True

    def install(self, package: str) -> bool:
        """Install ``package`` from the available apps; False when there is no such app."""
        app = self.available.get(package)
        if app is None:
            return False
        if package not in self.catalog.apps:
            self.catalog = Catalog(apps={**self.catalog.apps, package: app})
            self.state.logged_in[package] = app.logged_in
            self.touch()
        return True

    def close_app(self, package: str) -> None:
        """Forget everything ``package`` had open: its back stack, focus and dialog."""
        state = self.state
        state.stacks.pop(package, None)
        state.replay.pop(package, None)
        if state.foreground == package:
            state.foreground, state.focused = None, None
        if state.dialog is not None and state.dialog.package == package:
            state.dialog = None

    def uninstall(self, package: str) -> bool:
        """Remove ``package`` and everything it had open; False when it is not installed."""
        if package not in self.catalog.apps:
            return False
        self.catalog = Catalog(apps={p: a for p, a in self.catalog.apps.items() if p != package})
        self.close_app(package)
        state = self.state
        state.network_error.discard(package)
        for per_app in (state.logged_in, state.permissions):
            per_app.pop(package, None)
        state.inputs = {k: v for k, v in state.inputs.items() if not k.startswith(package + "/")}
        state.toggles = {k: v for k, v in state.toggles.items() if not k.startswith(package + "/")}
        self.touch()
        return True

    def app(self, package: str | None) -> AppSpec | None:
        return self.catalog.get(package) if package else None

    def replay_player(self) -> ReplayPlayer | None:
        """The player of the recorded app in front, unless something covers it (shade, dialog)."""
        state = self.state
        package = state.foreground
        app = self.replays.get(package) if package is not None else None
        if package is None or app is None or package not in self.catalog.apps:
            return None
        if state.shade_open or state.dialog is not None or package in state.network_error:
            return None
        cursor = state.replay.get(package)
        if cursor is None:
            cursor = self.launch_replay(package)
        return ReplayPlayer(app, cursor)

    def launch_replay(self, package: str) -> ReplayCursor:
        """Start recorded app ``package`` on its launch screen."""
        app = self.replays[package]
        cursor = ReplayCursor(package, app.launch, trail=self.state.replay_trail)
        self.state.replay[package] = cursor
        cursor.note("launch", Outcome.LAUNCHED)
        self.touch()
        return cursor

    def _replay_pixels(self, kind: str, player: ReplayPlayer) -> bytes:
        """The recorded screenshot as ``png`` or ``raw`` (cached while the phone is unchanged)."""
        cached = self._replay_cache.get(kind)
        if cached is not None and cached[0] == self._version:
            return cached[1]
        screen = player.app.screens[player.cursor.screen]
        made = replay_png(screen) if kind == "png" else replay_raw(screen)
        self._replay_cache[kind] = (self._version, made)
        return made

    def top_page(self) -> Page | None:
        """The foreground app's current page, if an app is in front."""
        if self.state.foreground is None:
            return None
        stack = self.state.stacks.get(self.state.foreground)
        return stack[-1] if stack else None

    # ------------------------------------------------------------------ data

    def permissions_of(self, app: AppSpec) -> list[Record]:
        """The app's permissions with this phone's grants applied."""
        granted = self.state.permissions.get(app.package, {})
        out: list[Record] = []
        for perm in app.permissions:
            name = str(perm.get("name", ""))
            out.append({**perm, "status": granted.get(name, perm.get("status", ""))})
        return out

    def _system_apps(self) -> list[Record]:
        return [
            {"id": a.package, "label": a.label, "package": a.package, "version": a.version,
             "icon_color": a.icon_color, "storage": a.storage,
             "permissions": list(self.permissions_of(a))}
            for a in self.catalog.apps.values()
        ]

    def records_for(self, app: AppSpec, widget: Widget, scope: Scope) -> list[Record]:
        """The records a list widget shows: source, day, variation, search, sort, limit."""
        source = widget.source or ""
        day = self.clock.day
        records: list[Record]
        if source == "system.apps":
            records = self._system_apps()
        elif source == "system.permissions":
            records = self.permissions_of(app)
        elif source.startswith("record."):
            value = scope.lookup(source)
            records = [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
        else:
            records = apply_variation(app.data.get(source, []), app.variation, source,
                                      self.identity.seed, day)
        records = [r for r in records if is_visible_on(r, day)]
        if widget.date is not None:
            today = self.clock.now().date()
            wanted = resolve_day(widget.date, today)
            records = [r for r in records
                       if wanted is not None and is_on_date(r.get(widget.date_field), wanted, today,
                                                            self.clock.start.date())]
        query = scope.globals.get("query", "")
        if widget.search is not None and query:
            scored = []
            for record in records:
                best = max((fuzz.WRatio(query, str(record.get(f, "")), processor=utils.default_process)
                            for f in widget.search.fields), default=0.0)
                if best >= widget.search.cutoff:
                    scored.append((best, record))
            scored.sort(key=lambda pair: -pair[0])
            records = [r for _, r in scored]
        if widget.sort:
            key = widget.sort.lstrip("-")
            records = sorted(records, key=lambda r: _sort_key(r.get(key)), reverse=widget.sort.startswith("-"))
        return records[: widget.limit] if widget.limit else records

    def notifications(self) -> list[tuple[AppSpec, int, str, str]]:
        """Notifications posted by now and not dismissed: (app, index, title, text)."""
        day = self.clock.day
        clock = self.clock.now().strftime("%H:%M")
        out = []
        for app in self.catalog.apps.values():
            for i, note in enumerate(app.notifications):
                posted = note.day < day or (note.day == day and note.time <= clock)
                if posted and f"{app.package}#{i}" not in self.state.dismissed_notifications:
                    out.append((app, i, note.title, note.text))
        return out

    # ------------------------------------------------------------------ output

    def toast_text(self) -> str | None:
        toast = self.state.toast
        if toast is None or toast.until <= self.clock.seconds():
            return None
        return toast.text

    def frame(self) -> Frame:
        """The current frame, composed once per state change (and per clock minute)."""
        now = self.clock.now()
        toast = self.toast_text()
        # the date is in the key because day-relative templates ({today+2}) change at midnight
        key = (self._version, now.strftime("%Y-%m-%d %H:%M"), toast, len(self.notifications()))
        if self._frame is not None and key == self._cache_key:
            return self._frame
        inputs = FrameInputs(
            apps=self.catalog.apps, launcher_apps=self.catalog.launchable, display=self.display,
            serial=self.serial, model=self.identity.model, clock_text=now.strftime("%H:%M"),
            today=now.date().isoformat(), notifications=self.notifications(),
            resolve_source=self.records_for,
        )
        self._frame = compose_frame(self.state, inputs, toast)
        self._cache_key = key
        self._png = self._raw = self._xml = None
        return self._frame

    def screenshot_image(self) -> Image.Image:
        return render_frame(self.frame(), self.display)

    def screenshot_png(self) -> bytes:
        """``screencap -p``: the screen as PNG bytes (cached while unchanged)."""
        player = self.replay_player()
        if player is not None:
            return self._replay_pixels("png", player)
        self.frame()
        if self._png is None:
            buffer = io.BytesIO()
            self.screenshot_image().save(buffer, "PNG", compress_level=1)
            self._png = buffer.getvalue()
        return self._png

    def screenshot_raw(self) -> bytes:
        """``screencap`` without -p: a 16-byte header (w, h, format, colorspace) + RGBA pixels."""
        player = self.replay_player()
        if player is not None:
            return self._replay_pixels("raw", player)
        self.frame()
        if self._raw is None:
            image = self.screenshot_image().convert("RGBA")
            header = struct.pack("<IIII", image.width, image.height, _RAW_FORMAT_RGBA_8888, _COLORSPACE_SRGB)
            self._raw = header + image.tobytes()
        return self._raw

    def dump_xml(self) -> str:
        """``uiautomator dump``: the hierarchy XML (cached while unchanged)."""
        player = self.replay_player()
        if player is not None:
            return replay_xml(player.app, player.cursor)
        frame = self.frame()
        if self._xml is None:
            self._xml = dump_hierarchy(frame.windows)
        return self._xml

    def focused_activity(self) -> tuple[str, str]:
        """(package, activity) of the focused window, as dumpsys reports it."""
        player = self.replay_player()
        if player is not None:
            screen = player.app.screens[player.cursor.screen]
            activity = screen.activity
            return screen.package, screen.package + activity if activity.startswith(".") else activity
        frame = self.frame()
        return frame.package, frame.activity

    # ------------------------------------------------------------------ files

    def write_file(self, path: str, content: bytes) -> None:
        self.state.files[path] = (content, int(self.clock.now().timestamp()))

    def read_file(self, path: str) -> bytes | None:
        entry = self.state.files.get(path)
        return entry[0] if entry else None


def _sort_key(value: object) -> tuple[int, float, str]:
    if isinstance(value, bool) or value is None:
        return (1, 0.0, str(value))
    if isinstance(value, int | float):
        return (0, float(value), "")
    return (1, 0.0, str(value))
