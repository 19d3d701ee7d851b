"""Compose everything on screen into a :class:`Frame`: windows, overlays, scroll area.

A frame is what one screenshot shows and one ``uiautomator dump`` lists: the
launcher, the notification shade or the foreground app's window (top bar,
scroll body clipped to its viewport, bottom bar), then a dialog window, and
render-only overlays (soft keyboard, toast), as on a real phone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from device_farm.sim.fonts import measure, wrap_text
from device_farm.sim.layout import Display, LayoutContext, layout_widgets, text_px
from device_farm.sim.node import Box, Node, Paint, TapTarget
from device_farm.sim.spec import AppSpec, DialogKind, DialogSpec, Record, TextStyle, Widget
from device_farm.sim.state import Page, PhoneState
from device_farm.sim.template import Scope, expand_template

__all__ = ["LAUNCHER_PACKAGE", "SYSTEMUI_PACKAGE", "Frame", "FrameInputs", "ScrollArea", "compose_frame"]

LAUNCHER_PACKAGE = "com.android.launcher3"
SYSTEMUI_PACKAGE = "com.android.systemui"
PERMISSION_PACKAGE = "com.android.permissioncontroller"


@dataclass(frozen=True)
class ScrollArea:
    viewport: Box
    content_height: int
    offset: int

    @property
    def max_offset(self) -> int:
        return max(0, self.content_height - (self.viewport[3] - self.viewport[1]))


@dataclass
class Frame:
    package: str
    activity: str
    windows: list[Node]  # dumped, in z-order
    overlays: list[Node] = field(default_factory=list)  # drawn only
    scroll: ScrollArea | None = None
    keyboard_top: int | None = None
    clock_text: str = "09:00"
    notification_count: int = 0
    modal: bool = False  # a dialog takes every tap


@dataclass(frozen=True)
class FrameInputs:
    """What composing a frame reads besides the phone state."""

    apps: dict[str, AppSpec]
    launcher_apps: list[AppSpec]
    display: Display
    serial: str
    model: str
    clock_text: str
    today: str
    notifications: list[tuple[AppSpec, int, str, str]]  # app, index, title, text
    resolve_source: Callable[[AppSpec, Widget, Scope], list[Record]]


def _shift_clip(node: Node, dy: int, top: int, bottom: int) -> Node | None:
    left, t, right, b = node.box
    t, b = t + dy, b + dy
    if b <= top or t >= bottom:
        return None
    dl, dt, dr, db = node.paint_box
    node.draw_box = (dl, dt + dy, dr, db + dy)
    node.box = (left, max(t, top), right, min(b, bottom))
    node.children = [c for c in (_shift_clip(ch, dy, top, bottom) for ch in node.children) if c]
    return node


def _globals(inputs: FrameInputs, app: AppSpec | None, query: str) -> dict[str, str]:
    d = inputs.display
    values = {
        "query": query, "today": inputs.today, "now": inputs.clock_text,
        "device.model": inputs.model, "device.serial": inputs.serial,
        "device.width": str(d.width), "device.height": str(d.height), "device.density": str(d.density),
    }
    if app is not None:
        values |= {"app.label": app.label, "app.package": app.package}
    return values


def _window(package: str, d: Display, content: list[Node]) -> Node:
    """The DecorView skeleton real dumps show around an app's content."""
    content_box = (0, d.status_bar, d.width, d.height - d.nav_bar)
    holder = Node("android.widget.FrameLayout", content_box, package, resource_id="android:id/content",
                  children=content)
    column = Node("android.widget.LinearLayout", (0, 0, d.width, d.height), package, children=[holder])
    return Node("android.widget.FrameLayout", (0, 0, d.width, d.height), package, children=[
        column,
        Node("android.view.View", (0, 0, d.width, d.status_bar), package,
             resource_id="android:id/statusBarBackground"),
        Node("android.view.View", (0, d.height - d.nav_bar, d.width, d.height), package,
             resource_id="android:id/navigationBarBackground"),
    ])


def _scroll_body(
    package: str, rid: str, viewport: Box, content: list[Node], content_height: int, offset: int
) -> tuple[Node, ScrollArea]:
    area = ScrollArea(viewport, content_height, 0)
    offset = min(max(offset, 0), area.max_offset)
    top, bottom = viewport[1], viewport[3]
    shown = [n for n in (_shift_clip(c, top - offset, top, bottom) for c in content) if n]
    view = Node("android.widget.ScrollView", viewport, package, resource_id=rid,
                scrollable=area.max_offset > 0, focusable=True, children=shown)
    return view, ScrollArea(viewport, content_height, offset)


def _top_bar(app: AppSpec, title: str, back: bool, d: Display) -> Node:
    top, height = d.status_bar, d.px(56)
    bar = Node("android.view.ViewGroup", (0, top, d.width, top + height), app.package,
               resource_id=f"{app.package}:id/toolbar", paint=Paint.BAR, color=app.theme_color, layer=1)
    x = d.px(16)
    if back:
        bar.children.append(Node("android.widget.ImageButton", (0, top, d.px(56), top + height), app.package,
                                 desc="Navigate up", clickable=True, focusable=True, paint=Paint.TEXT,
                                 lines=("←",), text_color=app.on_theme_color, style=TextStyle.HEADLINE,
                                 align="center", tap=TapTarget(system="back")))
        x = d.px(64)
    size, _, _ = text_px(TextStyle.HEADLINE, d)
    bar.children.append(Node("android.widget.TextView", (x, top + (height - round(size * 1.4)) // 2,
                             d.width - d.px(16), top + (height + round(size * 1.4)) // 2), app.package,
                             text=title, paint=Paint.TEXT, lines=(title,), style=TextStyle.HEADLINE,
                             text_color=app.on_theme_color))
    return bar


def _app_frame(state: PhoneState, inputs: FrameInputs, app: AppSpec, page: Page) -> Frame:
    d = inputs.display
    screen = app.screens[page.screen]
    scope = Scope(record=page.record, globals=_globals(inputs, app, page.query),
                  logged_in=state.logged_in.get(app.package, app.logged_in), today=date.fromisoformat(inputs.today))
    prefix = f"{app.package}/"
    ctx = LayoutContext(
        app=app, screen_id=page.screen, display=d,
        inputs={k[len(prefix):]: v for k, v in state.inputs.items() if k.startswith(prefix)},
        focused=state.focused, toggles={k[len(prefix):]: v for k, v in state.toggles.items()
                                        if k.startswith(prefix)},
        resolve_source=lambda w, s: inputs.resolve_source(app, w, s),
    )
    keyboard_top = d.height - d.nav_bar - d.px(290) if state.focused else None
    bottom_edge = keyboard_top if keyboard_top is not None else d.height - d.nav_bar
    content: list[Node] = []
    top = d.status_bar
    if screen.title is not None:
        content.append(_top_bar(app, expand_template(screen.title, scope), screen.back_button, d))
        top += d.px(56)
    margin = d.px(16)
    bottom_nodes: list[Node] = []
    bottom_height = 0
    if screen.bottom and app.package not in state.network_error:
        bottom_nodes, end = layout_widgets(ctx, screen.bottom, scope, 0, 0, d.width, 0)
        bottom_height = end
        for n in bottom_nodes:
            _shift_clip(n, bottom_edge - bottom_height, 0, d.height)
    viewport = (0, top, d.width, bottom_edge - bottom_height)
    body = _network_error_body() if app.package in state.network_error else screen.body
    nodes, end = layout_widgets(ctx, body, scope, margin, d.px(12), d.width - 2 * margin, d.px(10))
    view, area = _scroll_body(app.package, f"{app.package}:id/scroll_view", viewport, nodes,
                              end + d.px(24), page.offset)
    page.offset = area.offset
    content.append(view)
    if bottom_nodes:
        bar = Node("android.widget.LinearLayout", (0, viewport[3], d.width, bottom_edge), app.package,
                   paint=Paint.BAR, color="#FFFFFF", children=bottom_nodes, layer=1)
        content.append(bar)
    activity = screen.activity if not screen.activity.startswith(".") else app.package + screen.activity
    return Frame(app.package, activity, [_window(app.package, d, content)], scroll=area,
                 keyboard_top=keyboard_top)


def _network_error_body() -> tuple[Widget, ...]:
    """The page an app shows while its network-error fault is on (the same for every app)."""
    return (
        Widget.model_validate({"type": "image", "id": "error_image", "color": "#CFD8DC", "height": 160,
                               "caption": "NO NETWORK"}),
        Widget.model_validate({"type": "text", "id": "error_message", "style": "title",
                               "text": "Network error. Check your connection and try again."}),
        Widget.model_validate({"type": "button", "id": "retry", "text": "Retry", "color": "#1976D2"}),
    )


def _launcher_frame(state: PhoneState, inputs: FrameInputs) -> Frame:
    d = inputs.display
    cols, cell_h = 4, d.px(104)
    cell_w = d.width // cols
    icons = []
    for i, app in enumerate(inputs.launcher_apps):
        x, y = (i % cols) * cell_w, d.px(16) + (i // cols) * cell_h
        icons.append(Node("android.widget.TextView", (x, y, x + cell_w, y + cell_h), LAUNCHER_PACKAGE,
                          text=app.label, desc=app.label, clickable=True, long_clickable=True, focusable=True,
                          paint=Paint.ICON, color=app.icon_color, lines=(app.label,),
                          tap=TapTarget(package=app.package)))
    rows = (len(inputs.launcher_apps) + cols - 1) // cols
    viewport = (0, d.status_bar, d.width, d.height - d.nav_bar)
    view, area = _scroll_body(LAUNCHER_PACKAGE, f"{LAUNCHER_PACKAGE}:id/apps_list_view", viewport, icons,
                              d.px(32) + rows * cell_h, state.launcher_offset)
    view.cls = "androidx.recyclerview.widget.RecyclerView"
    state.launcher_offset = area.offset
    return Frame(LAUNCHER_PACKAGE, f"{LAUNCHER_PACKAGE}.Launcher", [_window(LAUNCHER_PACKAGE, d, [view])],
                 scroll=area)


def _shade_frame(inputs: FrameInputs) -> Frame:
    d = inputs.display
    pkg = SYSTEMUI_PACKAGE
    cards: list[Node] = []
    y = d.status_bar + d.px(16)
    tsize, _, _ = text_px(TextStyle.TITLE, d)
    bsize, _, _ = text_px(TextStyle.BODY, d)
    for app, index, title, text in inputs.notifications:
        width = d.width - d.px(48)
        body = wrap_text(text, bsize, width, False, 3)
        h = d.px(24) + round(tsize * 1.4) * 2 + round(bsize * 1.4) * len(body)
        x0, x1 = d.px(16), d.width - d.px(16)
        line = round(tsize * 1.4)
        card = Node("android.widget.FrameLayout", (x0, y, x1, y + h), pkg,
                    resource_id=f"{pkg}:id/expandableNotificationRow", clickable=True, paint=Paint.CARD,
                    tap=TapTarget(package=app.package, button_index=index))
        ty = y + d.px(12)
        card.children = [
            Node("android.widget.TextView", (x0 + d.px(12), ty, x1, ty + line), pkg, text=app.label,
                 resource_id="android:id/app_name_text", paint=Paint.TEXT, lines=(app.label,),
                 style=TextStyle.CAPTION, text_color="#6B7280"),
            Node("android.widget.TextView", (x0 + d.px(12), ty + line, x1, ty + 2 * line), pkg, text=title,
                 resource_id="android:id/title", paint=Paint.TEXT, lines=(title,), style=TextStyle.TITLE),
            Node("android.widget.TextView", (x0 + d.px(12), ty + 2 * line, x1, y + h - d.px(12)), pkg,
                 text=text, resource_id="android:id/text", paint=Paint.TEXT, lines=body),
        ]
        cards.append(card)
        y += h + d.px(8)
    if not cards:
        cards.append(Node("android.widget.TextView", (d.px(16), y, d.width - d.px(16), y + d.px(40)), pkg,
                          text="No notifications", paint=Paint.TEXT, lines=("No notifications",)))
    root = Node("android.widget.FrameLayout", (0, 0, d.width, d.height), pkg,
                resource_id=f"{pkg}:id/notification_panel", paint=Paint.BAR, color="#E8EAED", children=cards)
    return Frame(pkg, f"{pkg}.shade.NotificationShade", [root])


def _dialog_window(app: AppSpec, spec: DialogSpec, d: Display) -> Node:
    pkg = PERMISSION_PACKAGE if spec.kind is DialogKind.PERMISSION else app.package
    x0, x1 = d.px(28), d.width - d.px(28)
    inner = x1 - x0 - d.px(48)
    lx = x0 + d.px(24)
    parts: list[Node] = []
    y = 0
    tsize, tbold, _ = text_px(TextStyle.TITLE, d)
    bsize, _, _ = text_px(TextStyle.BODY, d)
    if spec.title:
        lines = wrap_text(spec.title, tsize, inner, tbold, 4)
        h = round(tsize * 1.4) * len(lines)
        parts.append(Node("android.widget.TextView", (lx, y, lx + inner, y + h), pkg, text=spec.title,
                          resource_id=f"{pkg}:id/permission_message" if pkg == PERMISSION_PACKAGE
                          else "android:id/alertTitle", paint=Paint.TEXT, lines=lines, style=TextStyle.TITLE))
        y += h + d.px(12)
    if spec.image:
        h = d.px(180)
        caps = wrap_text(spec.caption, d.px(16), inner - d.px(16), True, 3) if spec.caption else ()
        parts.append(Node("android.widget.ImageView", (lx, y, lx + inner, y + h), pkg,
                          resource_id=f"{pkg}:id/ad_image", paint=Paint.IMAGE, color=spec.image,
                          caption=spec.caption, caption_lines=caps))
        y += h + d.px(12)
    if spec.message:
        lines = wrap_text(spec.message, bsize, inner, False, 8)
        h = round(bsize * 1.4) * len(lines)
        parts.append(Node("android.widget.TextView", (lx, y, lx + inner, y + h), pkg, text=spec.message,
                          resource_id="android:id/message", paint=Paint.TEXT, lines=lines))
        y += h + d.px(12)
    for i, button in enumerate(spec.buttons):
        rid = (f"{pkg}:id/permission_{'allow' if button.action.value == 'grant' else 'deny'}_button"
               if pkg == PERMISSION_PACKAGE else f"android:id/button{i + 1}")
        h = d.px(48)
        parts.append(Node("android.widget.Button", (lx, y, lx + inner, y + h), pkg, text=button.text,
                          resource_id=rid, clickable=True, focusable=True, paint=Paint.BUTTON, align="center",
                          lines=(button.text,), tap=TapTarget(button_index=i)))
        y += h + d.px(6)
    height = y + d.px(42)
    top = (d.height - height) // 2
    panel = Node("android.widget.FrameLayout", (x0, top, x1, top + height), pkg, paint=Paint.CARD,
                 resource_id=f"{pkg}:id/grant_dialog" if pkg == PERMISSION_PACKAGE else "android:id/parentPanel",
                 children=[n for n in (_shift_clip(p, top + d.px(24), 0, d.height) for p in parts) if n])
    return Node("android.widget.FrameLayout", (0, 0, d.width, d.height), pkg, paint=Paint.SCRIM,
                children=[panel])


def _keyboard(d: Display, top: int) -> Node:
    return Node("android.inputmethodservice.KeyboardView", (0, top, d.width, d.height - d.nav_bar),
                "com.google.android.inputmethod.latin", paint=Paint.BAR, color="#D1D5DB",
                lines=("q w e r t y u i o p", "a s d f g h j k l", "z x c v b n m", "space"))


def _toast(d: Display, text: str) -> Node:
    size, _, _ = text_px(TextStyle.BODY, d)
    width = min(d.width - d.px(48), measure(text, size) + d.px(40))
    x0 = (d.width - width) // 2
    y1 = d.height - d.nav_bar - d.px(72)
    y0 = y1 - round(size * 1.4) - d.px(20)
    return Node("android.widget.Toast", (x0, y0, x0 + width, y1), "android", text=text, paint=Paint.BUTTON,
                color="#323232", text_color="#FFFFFF", align="center", lines=(text,))


def compose_frame(state: PhoneState, inputs: FrameInputs, toast: str | None) -> Frame:
    """The frame the phone shows now."""
    d = inputs.display
    app = inputs.apps.get(state.foreground) if state.foreground else None
    if state.shade_open:
        frame = _shade_frame(inputs)
    elif app is None or not state.stacks.get(app.package):
        frame = _launcher_frame(state, inputs)
    else:
        frame = _app_frame(state, inputs, app, state.stacks[app.package][-1])
    frame.clock_text, frame.notification_count = inputs.clock_text, len(inputs.notifications)
    if state.dialog is not None and not state.shade_open:
        owner = inputs.apps.get(state.dialog.package)
        spec = state.dialog.spec
        if owner is not None and spec is None:
            spec = owner.dialogs.get(state.dialog.dialog)
        if owner is not None and spec is not None:
            frame.windows.append(_dialog_window(owner, spec, d))
            frame.modal = True
    if frame.keyboard_top is not None:
        frame.overlays.append(_keyboard(d, frame.keyboard_top))
    if toast:
        frame.overlays.append(_toast(d, toast))
    return frame
