"""Lay out an app screen's widget tree into :class:`Node` boxes.

Widgets stack top to bottom in dp; the display's density turns dp into
pixels. Layout happens in content coordinates (y from 0 at the top of the
scroll body); :mod:`device_farm.sim.frame` then shifts by the scroll offset
and clips to the viewport, as a ScrollView does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from device_farm.sim.fonts import wrap_text
from device_farm.sim.node import Node, Paint, TapTarget
from device_farm.sim.spec import Action, AppSpec, Record, TextStyle, Widget, WidgetType
from device_farm.sim.template import Scope, check_condition, expand_template

__all__ = ["STYLE_SP", "Display", "LayoutContext", "layout_widgets", "text_px"]

# sp size, bold, colour per text style
STYLE_SP: dict[TextStyle, tuple[int, bool, str]] = {
    TextStyle.CAPTION: (13, False, "#6B7280"),
    TextStyle.BODY: (15, False, "#1F2937"),
    TextStyle.TITLE: (17, True, "#111827"),
    TextStyle.HEADLINE: (22, True, "#111827"),
    TextStyle.PRICE: (18, True, "#E5484D"),
}
_CLASS = {
    WidgetType.TEXT: "android.widget.TextView",
    WidgetType.BUTTON: "android.widget.Button",
    WidgetType.IMAGE: "android.widget.ImageView",
    WidgetType.INPUT: "android.widget.EditText",
    WidgetType.SWITCH: "android.widget.Switch",
    WidgetType.CHECKBOX: "android.widget.CheckBox",
    WidgetType.DIVIDER: "android.view.View",
    WidgetType.SPACER: "android.view.View",
    WidgetType.ROW: "android.widget.LinearLayout",
    WidgetType.COLUMN: "android.widget.LinearLayout",
    WidgetType.CARD: "android.widget.LinearLayout",
    WidgetType.LIST: "androidx.recyclerview.widget.RecyclerView",
    WidgetType.TABS: "android.widget.LinearLayout",
}


@dataclass(frozen=True)
class Display:
    """A phone screen: pixels and density (dpi)."""

    width: int = 1080
    height: int = 2340
    density: int = 440

    def px(self, dp: float) -> int:
        """Device pixels for ``dp`` density-independent pixels."""
        return round(dp * self.density / 160)

    @property
    def status_bar(self) -> int:
        return self.px(24)

    @property
    def nav_bar(self) -> int:
        return self.px(48)


def text_px(style: TextStyle, display: Display) -> tuple[int, bool, str]:
    """Pixel size, boldness and colour of a text style."""
    sp, bold, color = STYLE_SP[style]
    return display.px(sp), bold, color


@dataclass(frozen=True)
class LayoutContext:
    """Everything a layout reads besides the widgets: the phone's view of this screen."""

    app: AppSpec
    screen_id: str
    display: Display
    inputs: Mapping[str, str]
    focused: str | None
    toggles: Mapping[str, bool]
    resolve_source: Callable[[Widget, Scope], list[Record]]

    def resource_id(self, widget: Widget) -> str:
        return f"{self.app.package}:id/{widget.id}" if widget.id else ""

    def key(self, widget: Widget, scope: Scope, index: int) -> str:
        """A stable identity for stateful widgets (inputs, toggles) on this screen."""
        rec = scope.item or scope.record or {}
        return f"{self.screen_id}/{rec.get('id', '')}/{widget.id or index}"


def _tap_for(widget: Widget, scope: Scope) -> TapTarget | None:
    if widget.go is None and widget.action is None and widget.dialog is None and not widget.toast:
        return None
    return TapTarget(
        go=widget.go,
        action=widget.action,
        toast=expand_template(widget.toast, scope),
        dialog=widget.dialog,
        login=widget.login,
        record=scope.item or scope.record,
    )


def _text_node(ctx: LayoutContext, widget: Widget, scope: Scope, x: int, y: int, width: int) -> Node:
    size, bold, color = text_px(widget.style, ctx.display)
    text = expand_template(widget.text, scope)
    lines = wrap_text(text, size, max(width, size), bold, widget.lines)
    height = max(round(size * 1.4) * len(lines), round(size * 1.4))
    tap = _tap_for(widget, scope)
    return Node(
        cls=widget.cls or _CLASS[widget.type], box=(x, y, x + width, y + height), package=ctx.app.package,
        text=text, resource_id=ctx.resource_id(widget), desc=expand_template(widget.desc, scope),
        clickable=tap is not None, paint=Paint.TEXT, style=widget.style, lines=lines, text_color=color,
        align=widget.align, tap=tap,
    )


def _leaf(ctx: LayoutContext, widget: Widget, scope: Scope, x: int, y: int, width: int, index: int) -> Node:
    d = ctx.display
    kind = widget.type
    if kind is WidgetType.TEXT:
        return _text_node(ctx, widget, scope, x, y, width)
    base = Node(
        cls=widget.cls or _CLASS[kind], box=(x, y, x + width, y), package=ctx.app.package,
        resource_id=ctx.resource_id(widget), desc=expand_template(widget.desc, scope),
        tap=_tap_for(widget, scope), align=widget.align,
    )
    if widget.width is not None and kind not in (WidgetType.BUTTON, WidgetType.INPUT):
        width = min(width, d.px(widget.width))
    if kind in (WidgetType.DIVIDER, WidgetType.SPACER):
        height = d.px(widget.height or (1 if kind is WidgetType.DIVIDER else 16))
        base.paint = Paint.DIVIDER if kind is WidgetType.DIVIDER else Paint.NONE
    elif kind is WidgetType.IMAGE:
        height = d.px(widget.height or 120)
        base.paint, base.color = Paint.IMAGE, expand_template(widget.color or "#B0BEC5", scope)
        base.caption = expand_template(widget.caption, scope)
        if base.caption:
            size = d.px(16)
            base.caption_lines = wrap_text(base.caption, size, max(width - d.px(16), size), True, 3)
    elif kind is WidgetType.BUTTON:
        size, bold, _ = text_px(widget.style, d)
        text = expand_template(widget.text, scope)
        base.lines = wrap_text(text, size, max(width - d.px(32), size), bold, widget.lines or 2)
        height = max(d.px(widget.height or 52), round(size * 1.4) * len(base.lines) + d.px(16))
        base.text, base.paint, base.clickable, base.focusable = text, Paint.BUTTON, True, True
        base.color = expand_template(widget.color, scope) if widget.color else None
        base.align = "center" if widget.color else widget.align
        if base.tap is None:
            base.tap = TapTarget(record=scope.item or scope.record)
        if widget.action is Action.SELECT:
            # A filter chip shows its state as a real one does: selected in the dump, filled in pixels.
            key = ctx.key(widget, scope, index)
            base.selected = ctx.toggles.get(key, False)
            base.tap = replace(base.tap, select_key=key)
    elif kind is WidgetType.INPUT:
        key = ctx.key(widget, scope, index)
        typed = ctx.inputs.get(key, "")
        shown = "•" * len(typed) if widget.password and typed else typed
        base.text = shown or expand_template(widget.hint, scope)
        base.hint_shown = not typed
        base.lines = (base.text,)
        height = d.px(widget.height or 52)
        base.paint, base.clickable, base.focusable = Paint.INPUT, True, True
        base.focused = ctx.focused == key
        base.password = widget.password
        base.tap = TapTarget(input_key=key, go=widget.submit, record=scope.item or scope.record)
    else:  # switch / checkbox
        key = ctx.key(widget, scope, index)
        checked = ctx.toggles.get(key, check_condition(widget.checked, scope))
        size, bold, _ = text_px(widget.style, d)
        base.text = expand_template(widget.text, scope)
        base.lines = wrap_text(base.text, size, max(width - d.px(80), size), bold, 2)
        height = max(d.px(56), round(size * 1.4) * len(base.lines) + d.px(16))
        base.paint, base.checkable, base.checked, base.clickable = Paint.TOGGLE, True, checked, True
        base.focusable = True
        toggle = key if widget.action is Action.TOGGLE else None
        base.tap = TapTarget(toggle_key=toggle, action=widget.action, record=scope.item or scope.record)
    base.box = (x, y, x + width, y + height)
    return base


def _container(
    ctx: LayoutContext, widget: Widget, scope: Scope, x: int, y: int, width: int
) -> Node:
    d = ctx.display
    node = Node(
        cls=widget.cls or _CLASS[widget.type], box=(x, y, x + width, y), package=ctx.app.package,
        resource_id=ctx.resource_id(widget), desc=expand_template(widget.desc, scope),
        tap=_tap_for(widget, scope),
    )
    node.clickable = node.tap is not None
    pad = d.px(12) if widget.type is WidgetType.CARD else 0
    if widget.type is WidgetType.CARD:
        node.paint = Paint.CARD
    inner_x, inner_w = x + pad, width - 2 * pad
    cursor = y + pad
    if widget.type is WidgetType.ROW:
        gap = d.px(12)
        shown = [c for c in widget.children if check_condition(c.show_if, scope)]
        fixed = sum(d.px(c.width) for c in shown if c.width is not None)
        flexible = [c for c in shown if c.width is None]
        free = inner_w - fixed - gap * max(len(shown) - 1, 0)
        share = max(free // max(len(flexible), 1), d.px(24))
        cx, bottom = inner_x, cursor
        for i, child in enumerate(shown):
            cw = d.px(child.width) if child.width is not None else share
            built = _build(ctx, child, scope, cx, cursor, cw, i)
            node.children.extend(built)
            bottom = max([bottom, *(n.box[3] for n in built)])
            cx += cw + gap
        cursor = bottom
        _group_chips(node.children)
    else:
        gap = d.px(4)
        children = widget.children
        for i, child in enumerate(children):
            if not check_condition(child.show_if, scope):
                continue
            built = _build(ctx, child, scope, inner_x, cursor, inner_w, i)
            node.children.extend(built)
            cursor = max([cursor, *(n.box[3] for n in built)]) + gap
        cursor -= gap if node.children else 0
    node.box = (x, y, x + width, cursor + pad)
    return node


def _group_chips(row: list[Node]) -> None:
    """The filter chips of one row form a group: selecting one unselects the others."""
    keys = tuple(n.tap.select_key for n in row if n.tap is not None and n.tap.select_key is not None)
    for n in row:
        if n.tap is not None and n.tap.select_key is not None:
            n.tap = replace(n.tap, select_group=keys)


def _list(ctx: LayoutContext, widget: Widget, scope: Scope, x: int, y: int, width: int) -> Node:
    d = ctx.display
    node = Node(
        cls=widget.cls or _CLASS[widget.type], box=(x, y, x + width, y), package=ctx.app.package,
        resource_id=ctx.resource_id(widget),
    )
    records = ctx.resolve_source(widget, scope)
    if widget.filter:
        records = [r for r in records if check_condition(widget.filter, scope.with_item(r))]
    if widget.item is None:
        return node
    cursor = y
    if not records:
        empty = Widget(type=WidgetType.TEXT, text=widget.empty, style=TextStyle.CAPTION)
        node.children.append(_text_node(ctx, empty, scope, x, y, width))
        cursor = node.children[0].box[3]
    for i, record in enumerate(records):
        item_scope = scope.with_item(record)
        built = _build(ctx, widget.item, item_scope, x, cursor, width, i)
        node.children.extend(built)
        cursor = max([cursor, *(n.box[3] for n in built)]) + d.px(8)
    node.box = (x, y, x + width, max(cursor - d.px(8), y))
    return node


def _tabs(ctx: LayoutContext, widget: Widget, scope: Scope, x: int, y: int, width: int) -> Node:
    d = ctx.display
    height = d.px(56)
    node = Node(
        cls=widget.cls or _CLASS[widget.type], box=(x, y, x + width, y + height), package=ctx.app.package,
        resource_id=ctx.resource_id(widget), paint=Paint.BAR, color="#FFFFFF",
    )
    each = width // max(len(widget.tabs), 1)
    for i, tab in enumerate(widget.tabs):
        selected = tab.go == ctx.screen_id
        left = x + i * each
        node.children.append(Node(
            cls="android.widget.TextView", box=(left, y, left + each, y + height), package=ctx.app.package,
            text=expand_template(tab.text, scope), resource_id=f"{ctx.app.package}:id/{tab.id}" if tab.id else "",
            clickable=True, selected=selected, paint=Paint.TAB, align="center",
            lines=(expand_template(tab.text, scope),), style=TextStyle.TITLE if selected else TextStyle.BODY,
            tap=TapTarget(go=tab.go, tab=True, record=scope.record),  # every tab shows the page's record
        ))
    return node


def _build(
    ctx: LayoutContext, widget: Widget, scope: Scope, x: int, y: int, width: int, index: int
) -> list[Node]:
    if not check_condition(widget.show_if, scope):
        return []
    if widget.type in (WidgetType.ROW, WidgetType.COLUMN, WidgetType.CARD):
        return [_container(ctx, widget, scope, x, y, width)]
    if widget.type is WidgetType.LIST:
        return [_list(ctx, widget, scope, x, y, width)]
    if widget.type is WidgetType.TABS:
        return [_tabs(ctx, widget, scope, x, y, width)]
    return [_leaf(ctx, widget, scope, x, y, width, index)]


def layout_widgets(
    ctx: LayoutContext, widgets: tuple[Widget, ...], scope: Scope, x: int, y: int, width: int, gap: int
) -> tuple[list[Node], int]:
    """Stack ``widgets`` from ``y`` down; returns the nodes and the bottom edge."""
    nodes: list[Node] = []
    cursor = y
    for i, widget in enumerate(widgets):
        built = _build(ctx, widget, scope, x, cursor, width, i)
        if built:
            nodes.extend(built)
            cursor = max(n.box[3] for n in built) + gap
    return nodes, (cursor - gap if nodes else y)
