"""Draw a :class:`Frame` to real pixels with Pillow.

Order matters as on a phone: the scroll body first, then fixed bars over
it (so scrolled-out content is hidden under them), the status and
navigation bars, dialog windows with a scrim, then keyboard and toast. The
scroll body's widgets are drawn whole and cut at the viewport, as a phone
clips a ScrollView. The whole page in one piece (the ground truth of a
scrolling capture) is :mod:`device_farm.sim.full_page`.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from PIL import Image, ImageDraw

from device_farm.sim.fonts import draw_text, font_for, measure
from device_farm.sim.frame import (
    LAUNCHER_PACKAGE,
    SYSTEMUI_PACKAGE,
    Frame,
)
from device_farm.sim.layout import Display, text_px
from device_farm.sim.node import Box, Node, Paint
from device_farm.sim.spec import TextStyle

__all__ = ["render_frame"]

_BG = (255, 255, 255)
_LAUNCHER_BG = (30, 58, 95)
_INK = (31, 41, 55)
_MUTED = (156, 163, 175)
_ACCENT = (25, 118, 210)


@lru_cache(maxsize=512)
def _rgb(color: str | None, default: tuple[int, int, int] = _BG) -> tuple[int, int, int]:
    if not color or not color.startswith("#") or len(color) != 7:
        return default
    try:
        return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
    except ValueError:
        return default


def _on(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    """Readable text colour on ``bg``."""
    luminance = 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2]
    return (17, 17, 17) if luminance > 150 else (255, 255, 255)


@lru_cache(maxsize=8)
def _scrim_mask(size: tuple[int, int]) -> Image.Image:
    return Image.new("L", size, 120)


class _Painter:
    def __init__(self, display: Display) -> None:
        self.d = display
        self.image = Image.new("RGB", (display.width, display.height), _BG)
        self.draw = ImageDraw.Draw(self.image)

    def lines(self, node: Node, box: Box, style: TextStyle, color: tuple[int, int, int],
              lines: tuple[str, ...], align: str, valign_center: bool = False, pad: int = 0) -> None:
        size, bold, _ = text_px(style, self.d)
        step = round(size * 1.4)
        left, top, right, bottom = box
        y = top + (bottom - top - step * len(lines)) // 2 if valign_center else top
        clip_top, clip_bottom = node.box[1], node.box[3]
        for line in lines:
            if y >= clip_top - 2 and y + step <= clip_bottom + 2:
                width = measure(line, size, bold)
                if align == "center":
                    x = left + (right - left - width) // 2
                elif align == "end":
                    x = right - pad - width
                else:
                    x = left + pad
                draw_text(self.draw, (x, y + (step - size) // 2), line, size, bold, color)
            y += step

    def node(self, node: Node) -> None:
        d, draw = self.d, self.draw
        box = node.paint_box
        clip = node.box
        paint = node.paint
        if paint is Paint.BAR:
            draw.rectangle(clip, fill=_rgb(node.color))
            if node.lines:  # soft keyboard: rows of keys
                self._keys(node)
        elif paint is Paint.CARD:
            draw.rounded_rectangle(clip, radius=d.px(8), fill=(255, 255, 255), outline=(229, 231, 235),
                                   width=2)
        elif paint is Paint.DIVIDER:
            draw.rectangle(clip, fill=(229, 231, 235))
        elif paint is Paint.IMAGE:
            bg = _rgb(node.color, (176, 190, 197))
            draw.rounded_rectangle(clip, radius=d.px(6), fill=bg)
            if node.caption_lines:
                self._caption(node, bg)
        elif paint is Paint.TEXT:
            color = _rgb(node.text_color, _INK)
            self.lines(node, box, node.style, color, node.lines, node.align)
        elif paint is Paint.BUTTON:
            bg = _ACCENT if node.selected else _rgb(node.color, (241, 243, 245))  # a selected chip is filled
            draw.rounded_rectangle(clip, radius=d.px(8), fill=bg)
            fg = _rgb(node.text_color, _on(bg))
            self.lines(node, box, node.style, fg, node.lines, node.align, True, d.px(16))
        elif paint is Paint.INPUT:
            outline = _ACCENT if node.focused else (209, 213, 219)
            draw.rounded_rectangle(clip, radius=d.px(8), fill=(249, 250, 251), outline=outline, width=3)
            fg = _MUTED if node.hint_shown else _INK
            self.lines(node, box, TextStyle.BODY, fg, node.lines, "start", True, d.px(14))
        elif paint is Paint.TOGGLE:
            self._toggle(node)
        elif paint is Paint.TAB:
            fg = _ACCENT if node.selected else (75, 85, 99)
            self.lines(node, box, node.style, fg, node.lines, "center", True)
        elif paint is Paint.ICON:
            self._icon(node)

    def _caption(self, node: Node, bg: tuple[int, int, int]) -> None:
        size = self.d.px(16)
        step = round(size * 1.4)
        left, top, right, bottom = node.paint_box
        y = top + (bottom - top - step * len(node.caption_lines)) // 2
        for line in node.caption_lines:
            if node.box[1] <= y and y + step <= node.box[3]:
                x = left + (right - left - measure(line, size, True)) // 2
                draw_text(self.draw, (x, y + (step - size) // 2), line, size, True, _on(bg))
            y += step

    def _toggle(self, node: Node) -> None:
        d, draw = self.d, self.draw
        left, top, right, bottom = node.paint_box
        self.lines(node, (left, top, right - d.px(72), bottom), node.style, _INK, node.lines, "start", True)
        cy = (top + bottom) // 2
        if node.box[1] > cy - d.px(12) or node.box[3] < cy + d.px(12):
            return
        if node.cls.endswith("CheckBox"):
            sq = (right - d.px(40), cy - d.px(11), right - d.px(18), cy + d.px(11))
            draw.rounded_rectangle(sq, radius=d.px(3), fill=_ACCENT if node.checked else (255, 255, 255),
                                   outline=_ACCENT if node.checked else (107, 114, 128), width=4)
            return
        track = (right - d.px(56), cy - d.px(12), right - d.px(8), cy + d.px(12))
        draw.rounded_rectangle(track, radius=d.px(12), fill=_ACCENT if node.checked else (189, 189, 189))
        knob_x = right - d.px(20) if node.checked else right - d.px(44)
        draw.ellipse((knob_x - d.px(10), cy - d.px(10), knob_x + d.px(10), cy + d.px(10)), fill=(255, 255, 255))

    def _icon(self, node: Node) -> None:
        d, draw = self.d, self.draw
        left, top, right, bottom = node.paint_box
        side = d.px(56)
        x0 = left + (right - left - side) // 2
        y0 = top + d.px(8)
        if node.box[1] <= y0 and y0 + side <= node.box[3]:
            draw.rounded_rectangle((x0, y0, x0 + side, y0 + side), radius=d.px(14), fill=_rgb(node.color))
            draw.ellipse((x0 + side // 3, y0 + side // 3, x0 + 2 * side // 3, y0 + 2 * side // 3),
                         fill=(255, 255, 255))
        self.lines(node, (left + d.px(4), y0 + side + d.px(6), right - d.px(4), bottom), TextStyle.CAPTION,
                   (255, 255, 255), node.lines, "center")

    def _keys(self, node: Node) -> None:
        d, draw = self.d, self.draw
        left, top, right, bottom = node.box
        rows = len(node.lines)
        row_h = (bottom - top - d.px(16)) // rows
        size = d.px(18)
        font = font_for(size)
        for r, row in enumerate(node.lines):
            keys = row.split(" ")
            key_w = (right - left - d.px(8)) // 10
            width = key_w * (len(keys) if row != "space" else 5)
            x = left + (right - left - width) // 2
            y = top + d.px(8) + r * row_h
            for key in keys:
                w = width if row == "space" else key_w
                draw.rounded_rectangle((x + 4, y + 4, x + w - 4, y + row_h - 4), radius=8, fill=(255, 255, 255))
                label = "" if key == "space" else key
                draw.text((x + (w - measure(label, size)) // 2, y + (row_h - size) // 2 - 4), label, font=font,
                          fill=_INK)
                x += w

    def layered(self, root: Node, viewport: Box | None = None) -> None:
        """Draw ``root`` with its layer-1 subtrees (fixed bars) over everything else.

        The node filling ``viewport`` (the scroll body) is drawn by :meth:`scrolled`.
        """
        deferred: list[Node] = []
        stack = [root]
        while stack:
            node = stack.pop()
            if node.layer == 1:
                deferred.append(node)
                continue
            if viewport is not None and node.box == viewport:
                deferred.extend(self.scrolled(node, viewport))
                viewport = None
                continue
            self.node(node)
            stack.extend(reversed(node.children))
        for top in deferred:
            for inner in top.walk():
                self.node(inner)

    def scrolled(self, body: Node, viewport: Box) -> list[Node]:
        """Draw a scroll body as a phone does: whole widgets, cut at the viewport's edges.

        A widget half scrolled out keeps its shape (no rounded corner or outline
        at the viewport edge, its half-visible text line drawn), so adjacent
        screenshots of one page join without a seam. Returns the layer-1
        subtrees met on the way, for the caller to draw on top.
        """
        page, page_draw = self.image, self.draw
        self.image = page.copy()
        self.draw = ImageDraw.Draw(self.image)
        deferred: list[Node] = []
        stack = [body]
        while stack:
            node = stack.pop()
            if node.layer == 1:
                deferred.append(node)
                continue
            self.node(dataclasses.replace(node, box=node.paint_box))
            stack.extend(reversed(node.children))
        page.paste(self.image.crop(viewport), viewport[:2])
        self.image, self.draw = page, page_draw
        return deferred

    def system_bars(self, frame: Frame, bar_color: tuple[int, int, int]) -> None:
        d, draw = self.d, self.draw
        draw.rectangle((0, 0, d.width, d.status_bar), fill=bar_color)
        fg = _on(bar_color)
        size = d.px(13)
        font = font_for(size, True)
        y = (d.status_bar - size) // 2 - 2
        draw.text((d.px(16), y), frame.clock_text, font=font, fill=fg)
        for i in range(min(frame.notification_count, 4)):
            x = d.px(64) + i * d.px(14)
            draw.ellipse((x, d.status_bar // 2 - d.px(4), x + d.px(8), d.status_bar // 2 + d.px(4)), fill=fg)
        battery = "76%"
        draw.text((d.width - d.px(16) - measure(battery, size, True), y), battery, font=font, fill=fg)
        top = d.height - d.nav_bar
        draw.rectangle((0, top, d.width, d.height), fill=(250, 250, 250))
        cy, r = top + d.nav_bar // 2, d.px(8)
        third = d.width // 3
        draw.polygon([(third // 2 + r, cy - r), (third // 2 + r, cy + r), (third // 2 - r, cy)], fill=(90, 90, 90))
        draw.ellipse((d.width // 2 - r, cy - r, d.width // 2 + r, cy + r), outline=(90, 90, 90), width=4)
        x = d.width - third // 2
        draw.rectangle((x - r, cy - r, x + r, cy + r), outline=(90, 90, 90), width=4)


def render_frame(frame: Frame, display: Display) -> Image.Image:
    """The screenshot of ``frame`` as an RGB image."""
    painter = _Painter(display)
    if frame.package == LAUNCHER_PACKAGE:
        painter.draw.rectangle((0, 0, display.width, display.height), fill=_LAUNCHER_BG)
        bar = _LAUNCHER_BG
    elif frame.package == SYSTEMUI_PACKAGE:
        bar = (232, 234, 237)
    else:
        bar = next((_rgb(n.color) for n in frame.windows[0].walk() if n.layer == 1 and n.color), (245, 245, 245))
    painter.layered(frame.windows[0], frame.scroll.viewport if frame.scroll is not None else None)
    painter.system_bars(frame, bar)
    for window in frame.windows[1:]:
        painter.image.paste((0, 0, 0), (0, 0, display.width, display.height), _scrim_mask(painter.image.size))
        for node in window.walk():
            if node is not window:
                painter.node(node)
    for overlay in frame.overlays:
        painter.node(overlay)
    return painter.image
