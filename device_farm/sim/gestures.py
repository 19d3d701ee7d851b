"""What the phone does on input: taps, swipes, keys, text, app starts, back.

Behaviour follows Android where a driver can tell the difference: a slow
swipe scrolls by the finger distance minus the touch slop, a fast one flings
further (capped at one viewport), scrolling stops at the content's end, BACK
first hides the keyboard, then closes a dialog, then pops the back stack.
"""

from __future__ import annotations

from device_farm.sim.errors import ShellCommandError
from device_farm.sim.frame import Frame
from device_farm.sim.node import Node, TapTarget
from device_farm.sim.phone import Phone
from device_farm.sim.replay.cursor import Outcome
from device_farm.sim.spec import Action, DialogSpec, Popup, Record
from device_farm.sim.state import OpenDialog, Page, PhoneState, Toast
from device_farm.sim.template import seeded_random

__all__ = ["KEYCODES", "Gestures"]

KEYCODES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27,
    "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82, "SEARCH": 84, "VOLUME_MUTE": 164,
    "APP_SWITCH": 187, "SLEEP": 223, "WAKEUP": 224, "FORWARD_DEL": 112, "ESCAPE": 111,
}
_TOAST_SECONDS = 2.0
_FLING_MS = 200  # swipes shorter than this fling


def _hit(root: Node, x: int, y: int) -> Node | None:
    found = None
    for node in root.walk():
        left, top, right, bottom = node.box
        if node.tap is not None and left <= x < right and top <= y < bottom:
            found = node  # later in walk order = deeper / on top
    return found


class Gestures:
    """Input handling for one phone."""

    def __init__(self, phone: Phone) -> None:
        self.phone = phone

    @property
    def state(self) -> PhoneState:
        return self.phone.state

    # ------------------------------------------------------------------ apps

    def start_app(self, package: str, activity: str | None = None) -> None:
        """Bring ``package`` to the front (launch it if not running); ``activity`` picks a screen."""
        app = self.phone.app(package)
        if app is None:
            raise ShellCommandError(f"Error: Activity not started, unable to resolve Intent for {package}")
        state = self.state
        state.shade_open, state.focused = False, None
        if state.dialog is not None and state.dialog.package != package:
            state.dialog = None
        screen = app.home
        if activity and package not in self.phone.replays:  # a recording starts where it was recorded
            full = activity if not activity.startswith(".") else package + activity
            matches = [sid for sid, s in app.screens.items()
                       if (s.activity if not s.activity.startswith(".") else package + s.activity) == full]
            if not matches:
                raise ShellCommandError(
                    f"Error: Activity class {{{package}/{activity}}} does not exist.")
            screen = matches[0]
        state.foreground = package
        state.launches += 1
        stack = state.stacks.get(package)
        if not stack:
            page = Page(screen)
            if app.screens[screen].login_required and not state.logged_in.get(package, app.logged_in) \
                    and app.login_screen is not None:
                # As when tapping into such a screen: log in first, then continue to it.
                page = Page(app.login_screen, pending=page)
            state.stacks[package] = [page]
            if package in self.phone.replays:
                self.phone.launch_replay(package)
            self._maybe_popup(package, app.popups)
            self._enter(package, page.screen)
        elif screen != stack[0].screen and activity:
            self._open(package, Page(screen))
        self.phone.touch()

    def force_stop(self, package: str) -> None:
        self.phone.close_app(package)
        self.phone.touch()

    def go_home(self) -> None:
        state = self.state
        state.foreground, state.focused, state.shade_open, state.dialog = None, None, False, None
        self.phone.touch()

    def back(self) -> None:
        state = self.state
        player = self.phone.replay_player()
        if player is not None:
            if player.key("BACK") is Outcome.LEFT:
                state.foreground = None  # as Android 12+: the root activity moves to the background
            self.phone.touch()
            return
        if state.shade_open:
            state.shade_open = False
        elif state.focused is not None:
            state.focused = None
        elif state.dialog is not None:
            state.dialog = None
        elif state.foreground is not None:
            stack = state.stacks.get(state.foreground, [])
            if len(stack) > 1:
                stack.pop()
            else:
                state.foreground = None  # Android 12+: the root activity moves to the background
        self.phone.touch()

    # ------------------------------------------------------------------ navigation

    def _toast(self, text: str) -> None:
        if text:
            self.state.toast = Toast(text, self.phone.clock.seconds() + _TOAST_SECONDS)

    def _maybe_popup(self, package: str, popups: tuple[Popup, ...]) -> None:
        state = self.state
        for popup in popups:
            key = f"{package}/{popup.dialog}"
            if state.dialog is not None or (popup.once and key in state.popups_seen):
                continue
            rng = seeded_random(self.phone.identity.seed, self.phone.serial, key, state.launches)
            if rng.random() < popup.chance:
                state.dialog = OpenDialog(package, popup.dialog)
                state.popups_seen.add(key)

    def _enter(self, package: str, screen_id: str) -> None:
        app = self.phone.app(package)
        if app is not None:
            state = self.state
            state.launches += 1
            self._maybe_popup(package, app.screens[screen_id].on_enter)

    def _open(self, package: str, page: Page, *, tab: bool = False, login: bool = False) -> None:
        app = self.phone.app(package)
        if app is None:
            return
        stack = self.state.stacks.setdefault(package, [])
        screen = app.screens[page.screen]
        logged_in = self.state.logged_in.get(package, app.logged_in)
        if (screen.login_required or login) and not logged_in and app.login_screen is not None:
            page = Page(app.login_screen, pending=page)
        if tab and stack:
            stack[-1] = page
        else:
            stack.append(page)
        self.state.focused = None
        self._enter(package, page.screen)

    def navigate(self, target: str, record: Record | None, *, tab: bool = False, login: bool = False,
                 query: str | None = None) -> None:
        """Follow a ``go:`` target from the foreground app."""
        package = self.state.foreground
        if target == "back":
            self.back()
            return
        # An app's own screen named ``home`` wins over the launcher: a "Home" tab inside
        # an app means the app's home page, as on a real phone.
        app = self.phone.app(package) if package is not None else None
        if package is None or (target == "home" and (app is None or "home" not in app.screens)):
            self.go_home()
            return
        current = self.phone.top_page()
        keep_query = current.query if current is not None else ""
        self._open(package, Page(target, record, query if query is not None else keep_query),
                   tab=tab, login=login)

    def _log_in(self, package: str) -> None:
        state = self.state
        state.logged_in[package] = True
        stack = state.stacks.get(package, [])
        if stack and stack[-1].pending is not None:
            pending = stack.pop().pending
            if pending is not None:
                stack.append(pending)
                self._enter(package, pending.screen)
        elif len(stack) > 1:
            stack.pop()

    def _run(self, target: TapTarget, node: Node | None) -> None:
        state = self.state
        package = state.foreground
        if target.system == "back":
            self.back()
            return
        if target.input_key is not None:
            state.focused = target.input_key
            return
        if target.toggle_key is not None and package is not None and node is not None:
            state.toggles[f"{package}/{target.toggle_key}"] = not node.checked
        if target.select_key is not None and package is not None and node is not None:
            for key in target.select_group:
                state.toggles[f"{package}/{key}"] = False
            state.toggles[f"{package}/{target.select_key}"] = not node.selected
        if target.action is Action.LOGIN and package is not None:
            self._log_in(package)
        elif target.action is Action.LOGOUT and package is not None:
            state.logged_in[package] = False
        elif target.action is Action.SUBMIT:
            self.submit()
        elif target.action is Action.DISMISS:
            state.dialog = None
        self._toast(target.toast)
        if target.dialog is not None and package is not None:
            state.dialog = OpenDialog(package, target.dialog)
        if target.go is not None:
            self.navigate(target.go, target.record, tab=target.tab, login=target.login)

    def _dialog_button(self, index: int) -> None:
        state = self.state
        opened = state.dialog
        if opened is None:
            return
        app = self.phone.app(opened.package)
        spec: DialogSpec | None = opened.spec or (app.dialogs.get(opened.dialog) if app else None)
        if spec is None or index >= len(spec.buttons):
            return
        button = spec.buttons[index]
        state.dialog = None
        if button.action in (Action.GRANT, Action.DENY) and button.permission:
            status = "Allowed only while in use" if button.action is Action.GRANT else "Not allowed"
            state.permissions.setdefault(opened.package, {})[button.permission] = status
        elif button.action is Action.LOGIN:
            self._log_in(opened.package)
        self._toast(button.toast)
        if button.go is not None and state.foreground == opened.package:
            self.navigate(button.go, None)

    # ------------------------------------------------------------------ input

    def tap(self, x: int, y: int) -> None:
        """A tap at (x, y) in screen pixels."""
        player = self.phone.replay_player()
        if player is not None:
            player.tap(x, y)
            self.phone.touch()
            return
        frame = self.phone.frame()
        state = self.state
        if frame.modal:
            hit = _hit(frame.windows[-1], x, y)
            if hit is not None and hit.tap is not None and hit.tap.button_index is not None:
                self._dialog_button(hit.tap.button_index)
        elif frame.keyboard_top is not None and y >= frame.keyboard_top:
            pass  # on the soft keyboard: keys are typed with `input text`
        else:
            hit = _hit(frame.windows[0], x, y)
            if hit is not None and hit.tap is not None:
                if state.shade_open:
                    self._open_notification(hit.tap)
                elif hit.tap.package is not None:
                    self.start_app(hit.tap.package)
                else:
                    self._run(hit.tap, hit)
        self.phone.touch()

    def _open_notification(self, target: TapTarget) -> None:
        app = self.phone.app(target.package)
        state = self.state
        state.shade_open = False
        if app is None or target.button_index is None:
            return
        state.dismissed_notifications.add(f"{app.package}#{target.button_index}")
        note = app.notifications[target.button_index]
        self.start_app(app.package)
        if note.go is not None:
            self.navigate(note.go, None)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        """A swipe; vertical swipes scroll the container under the start point."""
        state, d = self.state, self.phone.display
        player = self.phone.replay_player()
        if player is not None and not (y1 <= d.status_bar and y2 - y1 > d.px(48)):
            player.swipe(x1, y1, x2, y2, duration_ms)
            self.phone.touch()
            return
        frame = self.phone.frame()
        dy = y1 - y2
        if state.shade_open:
            if dy > d.px(48):
                state.shade_open = False
        elif y1 <= d.status_bar and -dy > d.px(48):
            state.shade_open, state.focused = True, None
        elif not frame.modal and frame.scroll is not None and abs(dy) > abs(x2 - x1):
            self._scroll(frame, x1, y1, dy, duration_ms)
        self.phone.touch()

    def _scroll(self, frame: Frame, x: int, y: int, dy: int, duration_ms: int) -> None:
        area = frame.scroll
        if area is None:
            return
        left, top, right, bottom = area.viewport
        if not (left <= x < right and top <= y < bottom):
            return
        distance = max(abs(dy) - self.phone.display.px(8), 0)  # ScrollView subtracts the touch slop
        if duration_ms < _FLING_MS:
            distance = min(distance * 2, bottom - top)  # a fling travels further, capped
        offset = min(max(area.offset + (distance if dy > 0 else -distance), 0), area.max_offset)
        page = self.phone.top_page()
        if frame.package == "com.android.launcher3" or page is None:
            self.state.launcher_offset = offset
        else:
            page.offset = offset

    def type_text(self, text: str) -> None:
        """``input text``: append to the focused field (nothing happens without focus)."""
        player = self.phone.replay_player()
        if player is not None:
            player.type_text(text)
            self.phone.touch()
            return
        state = self.state
        if state.focused is not None and state.foreground is not None:
            key = f"{state.foreground}/{state.focused}"
            state.inputs[key] = state.inputs.get(key, "") + text
            self.phone.touch()

    def submit(self) -> None:
        """ENTER on the focused field: open its ``submit`` screen with the text as query."""
        state = self.state
        frame = self.phone.frame()
        key = state.focused
        target = next((n.tap for n in frame.windows[0].walk()
                       if n.tap is not None and n.tap.input_key is not None
                       and (key is None or n.tap.input_key == key) and n.tap.go), None)
        if target is None or target.go is None or state.foreground is None or target.input_key is None:
            return
        query = state.inputs.get(f"{state.foreground}/{target.input_key}", "")
        state.focused = None
        self.navigate(target.go, target.record, query=query)

    def keyevent(self, code: int) -> None:
        """``input keyevent``: BACK, HOME, ENTER/SEARCH, DEL; others change nothing."""
        state = self.state
        player = self.phone.replay_player()
        if player is not None and code not in (KEYCODES["BACK"], KEYCODES["HOME"]):
            names = {number: name for name, number in KEYCODES.items()}
            player.key(names.get(code, str(code)))
            self.phone.touch()
            return
        if code == KEYCODES["BACK"]:
            self.back()
        elif code == KEYCODES["HOME"]:
            self.go_home()
        elif code in (KEYCODES["ENTER"], KEYCODES["SEARCH"]):
            self.submit()
        elif code == KEYCODES["DEL"] and state.focused is not None and state.foreground is not None:
            key = f"{state.foreground}/{state.focused}"
            state.inputs[key] = state.inputs.get(key, "")[:-1]
        self.phone.touch()

    def inject_popup(self, package: str, spec: DialogSpec) -> None:
        """Fault injection: open ``spec`` over ``package`` now."""
        self.state.dialog = OpenDialog(package, "injected", spec)
        self.phone.touch()
