"""Screens drawn from recorded views, for recordings saved without screenshots (DroidTask).

A recorded state lists every view with its class, bounds, text, content
description and flags; that is enough to draw a plain screen on which OCR,
the stitcher and a person's eye find what the dump says, where the dump says:

- a light background; views drawn parents first, in the recording's order;
- a text field as a white box with a line under it; a checkable view as a
  check box on its left (a switch on its right), filled and ticked when checked;
- a clickable view outlined, a selected one tinted;
- a view's text inside its box, wrapped and sized to it; a content description
  (an icon's "Settings") in grey where nothing inside the view shows text.

The dump stays exactly as recorded; only the pixels are made here.
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from core.models import Bounds
from core.recordings import DroidbotState, DroidbotView
from device_farm.sim.fonts import draw_text, measure, wrap_text

__all__ = ["draw_screen"]

_BACKGROUND = (248, 248, 250)
_TEXT = (33, 33, 33)
_DESCRIPTION = (110, 110, 118)
_OUTLINE = (196, 200, 212)
_SELECTED = (226, 234, 250)
_FIELD = (255, 255, 255)
_FIELD_LINE = (120, 124, 136)
_ACCENT = (26, 115, 232)
_OFF = (170, 170, 176)
_REFERENCE_WIDTH = 1080  # sizes below are for a 1080 px wide screen, scaled to others


def _scale(state: DroidbotState) -> float:
    return state.width / _REFERENCE_WIDTH


def _check_mark(draw: ImageDraw.ImageDraw, box: Bounds, checked: bool, switch: bool, scale: float) -> int:
    """Draw a check box (left) or a switch (right) in ``box``; the x where text may start."""
    side = max(8, min(round(48 * scale), box.height - 4))
    top = box.top + (box.height - side) // 2
    pad = round(16 * scale)
    if switch:
        right = box.right - pad
        left = right - 2 * side
        colour = _ACCENT if checked else _OFF
        draw.rounded_rectangle((left, top + side // 4, right, top + side - side // 4), radius=side // 4, fill=colour)
        knob = right - side if checked else left
        draw.ellipse((knob, top, knob + side, top + side), fill=(255, 255, 255), outline=colour, width=2)
        return box.left + pad
    left = box.left + pad
    square = (left, top, left + side, top + side)
    if checked:
        draw.rectangle(square, fill=_ACCENT)
        width = max(2, round(5 * scale))
        draw.line((left + side * 0.2, top + side * 0.55, left + side * 0.42, top + side * 0.78,
                   left + side * 0.82, top + side * 0.25), fill=(255, 255, 255), width=width)
    else:
        draw.rectangle(square, outline=_OFF, width=max(2, round(4 * scale)))
    return left + side + pad


def _draw_words(draw: ImageDraw.ImageDraw, text: str, box: Bounds, left: int, colour: tuple[int, int, int],
                scale: float) -> None:
    """``text`` in ``box`` from ``left``: as large as its box holds (12 to 42 px on 1080), on one
    line when a size down to the smallest fits, else wrapped."""
    pad = min(round(8 * scale), box.width // 20)
    width = box.right - pad - left
    if width < 8 or box.height < 8:
        return
    smallest = round(12 * scale)
    size = max(smallest, min(round(42 * scale), round(box.height * 0.5)))
    while size > smallest and measure(text, size) > width:
        size -= 1
    line_height = round(size * 1.25)
    lines = wrap_text(text, size, width, max_lines=max(1, box.height // line_height))
    y = box.top + max(0, (box.height - line_height * len(lines)) // 2)
    for line in lines:
        draw_text(draw, (left, y), line, size, False, colour)
        y += line_height


def _shows_text(view: DroidbotView, under: dict[int, list[DroidbotView]]) -> bool:
    """Whether ``view`` or a view inside it has text of its own to draw."""
    todo = [view]
    while todo:
        current = todo.pop()
        if (current.text or "").strip():
            return True
        todo.extend(under.get(current.temp_id, ()))
    return False


def draw_screen(state: DroidbotState) -> bytes:
    """A PNG of ``state`` drawn from its visible views (see the module docstring)."""
    scale = _scale(state)
    image = Image.new("RGB", (state.width, state.height), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    views = state.visible_views()
    under: dict[int, list[DroidbotView]] = {}
    for view in views:
        under.setdefault(view.parent, []).append(view)
    screen = Bounds(left=0, top=0, right=state.width, bottom=state.height)
    for view in views:
        box = view.box.clip(screen)
        if box.area == 0:
            continue
        if view.selected:
            draw.rectangle((box.left, box.top, box.right - 1, box.bottom - 1), fill=_SELECTED)
        if view.editable:
            draw.rectangle((box.left, box.top, box.right - 1, box.bottom - 1), fill=_FIELD)
            draw.line((box.left, box.bottom - 2, box.right - 1, box.bottom - 2), fill=_FIELD_LINE,
                      width=max(2, round(3 * scale)))
        elif view.clickable or view.long_clickable:
            draw.rectangle((box.left, box.top, box.right - 1, box.bottom - 1), outline=_OUTLINE,
                           width=max(1, round(2 * scale)))
        left = box.left + min(round(16 * scale), box.width // 20)
        if view.checkable:
            left = _check_mark(draw, box, view.checked, "switch" in view.class_name.lower(), scale)
        text = " ".join((view.text or "").split())
        if text:
            _draw_words(draw, text, box, left, _TEXT, scale)
        elif view.content_description and not _shows_text(view, under):
            _draw_words(draw, " ".join(view.content_description.split()), box, left, _DESCRIPTION, scale)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()
