"""An app map as a PNG (``droidretriever map show APP --image map.png``), the dashboard's picture.

A column per depth from the app's first page, each screen as its screenshot
(from the object store, when one is given; else a box with its title), an
arrow from a screen to each screen one of its elements opened, labelled with
that element. Walls have a red frame and their kind; screens reached only
through the app's search a dashed frame; a template "+N like it". Links back to
a shallower screen (tabs, "home") are left out: on a picture they hide the rest.

    map_layout(app_map) -> MapLayout    where each screen goes, and the picture's size
    draw_map(app_map, path, store)      the PNG
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, UnidentifiedImageError

from core.models import AppMap, Effect, MapScreen
from core.text import strip_controls
from storage import ObjectStore, StorageError
from storage.keys import validate_key

__all__ = ["MapLayout", "draw_map", "map_layout"]

NODE_W = 160
THUMB_H = 284
CAPTION_H = 46
NODE_H = THUMB_H + CAPTION_H
GAP_X = 200
GAP_Y = 28
PAD = 24
HEADER_H = 70

# Noto CJK first (screens are often Chinese), then DejaVu; Pillow's own font when neither is installed.
_FONTS = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
)
_BOLD = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"),
    Path("/usr/share/fonts/truetype/noto/NotoSans-Bold.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
)
_Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

_BACKGROUND = (248, 250, 252)
_INK = (15, 23, 42)
_MUTED = (100, 116, 139)
_FRAME = (203, 213, 225)
_PLACEHOLDER = (226, 232, 240)
_EDGE = (100, 116, 139)
_RED = (220, 38, 38)
_GREEN = (22, 163, 74)
_VIOLET = (124, 58, 237)
_SLATE = (71, 85, 105)


@dataclass(frozen=True)
class MapLayout:
    """Where each screen's box goes (its top-left corner), and the picture's size."""

    at: dict[str, tuple[int, int]]
    width: int
    height: int


def _path_order(app_map: AppMap, screen: MapScreen) -> tuple[int, tuple[int, ...], str]:
    return (0 if screen.id == app_map.start else 1, screen.path, screen.title)


def map_layout(app_map: AppMap) -> MapLayout:
    """A column per depth; in a column, screens in the order of their path from the start."""
    columns: dict[int, list[MapScreen]] = {}
    for screen in app_map.screens.values():
        columns.setdefault(screen.depth, []).append(screen)
    count = max(columns, default=-1) + 1
    at: dict[str, tuple[int, int]] = {}
    rows = 0
    for depth, column in columns.items():
        column.sort(key=lambda s: _path_order(app_map, s))
        rows = max(rows, len(column))
        for row, screen in enumerate(column):
            at[screen.id] = (PAD + depth * (NODE_W + GAP_X), HEADER_H + PAD + row * (NODE_H + GAP_Y))
    width = 2 * PAD + count * NODE_W + max(0, count - 1) * GAP_X
    height = HEADER_H + 2 * PAD + rows * NODE_H + max(0, rows - 1) * GAP_Y
    return MapLayout(at=at, width=max(width, 640), height=height)


@lru_cache(maxsize=16)
def _font(size: int, bold: bool = False) -> _Font:
    for path in _BOLD if bold else _FONTS:
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def _fit(draw: ImageDraw.ImageDraw, text: str, font: _Font, width: int) -> str:
    """``text`` on one line, cut with an ellipsis to ``width`` pixels."""
    text = " ".join(strip_controls(text).split())
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def _title(screen: MapScreen) -> str:
    return screen.title or f"{screen.kind.value} {screen.id[:6]}"


def _thumbnail(store: ObjectStore | None, screen: MapScreen) -> Image.Image | None:
    """The screen's screenshot scaled to the box's width, its top kept; None without one."""
    if store is None or not screen.screenshot_key:
        return None
    try:
        data = store.get_bytes(validate_key(screen.screenshot_key))
        with Image.open(io.BytesIO(data)) as shot:
            height = max(1, round(shot.height * NODE_W / shot.width))
            small = shot.convert("RGB").resize((NODE_W, height), Image.Resampling.BILINEAR)
    except (StorageError, ValueError, OSError, UnidentifiedImageError):
        return None  # a missing or damaged screenshot: the box with its title stands in
    return small.crop((0, 0, NODE_W, min(THUMB_H, height)))


def _dashed_rectangle(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int],
                      colour: tuple[int, int, int], width: int, dash: int = 10) -> None:
    left, top, right, bottom = box
    for x in range(left, right, 2 * dash):
        draw.line((x, top, min(x + dash, right), top), fill=colour, width=width)
        draw.line((x, bottom, min(x + dash, right), bottom), fill=colour, width=width)
    for y in range(top, bottom, 2 * dash):
        draw.line((left, y, left, min(y + dash, bottom)), fill=colour, width=width)
        draw.line((right, y, right, min(y + dash, bottom)), fill=colour, width=width)


def _tag(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, colour: tuple[int, int, int]) -> int:
    """A small filled label at ``xy``; returns its right edge."""
    font = _font(13, bold=True)
    x, y = xy
    right = x + round(draw.textlength(text, font=font)) + 10
    draw.rounded_rectangle((x, y, right, y + 20), radius=5, fill=colour)
    draw.text((x + 5, y + 10), text, font=font, fill=(255, 255, 255), anchor="lm")
    return right


def _draw_screen(canvas: Image.Image, draw: ImageDraw.ImageDraw, app_map: AppMap, screen: MapScreen,
                 corner: tuple[int, int], store: ObjectStore | None) -> None:
    x, y = corner
    box = (x, y, x + NODE_W, y + THUMB_H)
    thumb = _thumbnail(store, screen)
    draw.rectangle(box, fill=_PLACEHOLDER if thumb is None else (255, 255, 255))
    if thumb is None:
        font = _font(15)
        words = " ".join(strip_controls(_title(screen)).split())
        line_y = y + 72  # below the tags
        while words and line_y < y + THUMB_H - 20:  # the title, wrapped in the box
            line = _fit(draw, words, font, NODE_W - 16)
            draw.text((x + NODE_W // 2, line_y), line, font=font, fill=_MUTED, anchor="mm")
            words = words[len(line.rstrip("…")):].strip()
            line_y += 22
    else:
        canvas.paste(thumb, (x, y))
    if screen.wall is not None:
        draw.rectangle((box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3), outline=_RED, width=6)
    elif screen.behind_search:
        _dashed_rectangle(draw, box, _SLATE, 3)
    else:
        draw.rectangle(box, outline=_FRAME, width=3)
    tag_x = x + 6
    if screen.id == app_map.start:
        tag_x = _tag(draw, (tag_x, y + 6), "start", _GREEN) + 4
    if screen.wall is not None:
        _tag(draw, (tag_x, y + 6), f"wall: {screen.wall.value}", _RED)
    if screen.samples:
        _tag(draw, (x + 6, y + 30), f"+{len(screen.samples)} like it", _VIOLET)
    elif screen.template:
        _tag(draw, (x + 6, y + 30), "template", _VIOLET)
    if screen.behind_search:
        _tag(draw, (x + 6, y + THUMB_H - 26), "via search", _SLATE)
    draw.text((x, y + THUMB_H + 6), _fit(draw, _title(screen), _font(15, bold=True), NODE_W), font=_font(15, bold=True),
              fill=_INK)
    draw.text((x, y + THUMB_H + 26), screen.kind.value.replace("_", " "), font=_font(12), fill=_MUTED)


def _bezier(start: tuple[float, float], end: tuple[float, float], steps: int = 24) -> list[tuple[float, float]]:
    (x1, y1), (x2, y2) = start, end
    bend = max(40.0, (x2 - x1) / 2)
    c1, c2 = (x1 + bend, y1), (x2 - bend, y2)
    points = []
    for i in range(steps + 1):
        t = i / steps
        u = 1 - t
        points.append((u**3 * x1 + 3 * u * u * t * c1[0] + 3 * u * t * t * c2[0] + t**3 * x2,
                       u**3 * y1 + 3 * u * u * t * c1[1] + 3 * u * t * t * c2[1] + t**3 * y2))
    return points


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[float, float], end: tuple[float, float]) -> None:
    points = _bezier(start, end)
    draw.line(points, fill=_EDGE, width=2, joint="curve")
    (px, py), (ex, ey) = points[-2], points[-1]
    angle = math.atan2(ey - py, ex - px)
    head = [(ex, ey)] + [(ex - 15 * math.cos(angle + s * 0.42), ey - 15 * math.sin(angle + s * 0.42)) for s in (-1, 1)]
    draw.polygon(head, fill=_EDGE)


def _draw_transitions(draw: ImageDraw.ImageDraw, app_map: AppMap, layout: MapLayout) -> None:
    """Arrows to deeper screens, one per pair of screens; labels just before the arrowhead."""
    font = _font(13)
    incoming: dict[str, int] = {}
    labels: list[tuple[tuple[int, int], str]] = []
    for screen in app_map.screens.values():
        opened: dict[str, list[str]] = {}
        for element in screen.elements:
            target = app_map.screens.get(element.leads_to)
            if element.effect is Effect.OPENS and target is not None and target.depth > screen.depth:
                opened.setdefault(target.id, []).append(element.anchor or "(unlabelled)")
        sx, sy = layout.at[screen.id]
        for target_id, anchors in opened.items():
            tx, ty = layout.at[target_id]
            _arrow(draw, (sx + NODE_W + 2, sy + THUMB_H / 2), (tx - 4, ty + THUMB_H / 2))
            stack = incoming.get(target_id, 0)
            incoming[target_id] = stack + 1
            more = f" +{len(anchors) - 1}" if len(anchors) > 1 else ""
            labels.append(((tx - 10, ty + THUMB_H // 2 - 18 - 18 * stack),
                           _fit(draw, anchors[0], font, GAP_X - 60) + more))
    for (x, y), text in labels:  # above every line
        left = x - round(draw.textlength(text, font=font))
        draw.rectangle((left - 3, y - 9, x + 3, y + 9), fill=_BACKGROUND)
        draw.text((x, y), text, font=font, fill=_INK, anchor="rm")


def draw_map(app_map: AppMap, path: Path, store: ObjectStore | None = None) -> None:
    """Draw ``app_map`` as a PNG at ``path``; screenshots come from ``store`` when one is given."""
    layout = map_layout(app_map)
    canvas = Image.new("RGB", (layout.width, layout.height), _BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    name = app_map.label or app_map.package
    draw.text((PAD, 14), _fit(draw, f"{name} · {app_map.package} {app_map.version}", _font(22, bold=True), layout.width - 2 * PAD),
              font=_font(22, bold=True), fill=_INK)
    summary = (f"{len(app_map.screens)} screens, {len(app_map.walls)} wall(s), {app_map.stats.actions} actions"
               f"{f' ({app_map.stats.stopped})' if app_map.stats.stopped else ''}"
               f"{'' if app_map.complete else ', build under way'}")
    draw.text((PAD, 44), _fit(draw, summary, _font(14), layout.width - 2 * PAD), font=_font(14), fill=_MUTED)
    _draw_transitions(draw, app_map, layout)
    for screen in app_map.screens.values():
        _draw_screen(canvas, draw, app_map, screen, layout.at[screen.id], store)
    path.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(path, "PNG")
