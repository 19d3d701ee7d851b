"""Synthetic captures: tall images drawn with Pillow, text at known boxes, elements to match.

``draw_capture`` renders each line with a real font (Noto CJK, so Chinese and
¥ render) at the given position, measures the box the text really occupies,
and returns the Capture whose elements carry exactly those boxes, plus the PNG.
Cards are drawn as rounded rectangles and listed as text-less container
elements, the way a hierarchy dump lists a list item's layout.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from PIL import Image, ImageDraw, ImageFont

from core.models import Bounds, Capture, UIElement

__all__ = ["FONT_PATH", "WIDTH", "Card", "DrawnCapture", "Line", "draw_capture", "menu_card"]

FONT_PATH = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
WIDTH = 1080


@dataclass(frozen=True)
class Line:
    """One line of text drawn at ``(x, y)`` in a font of ``size`` pixels."""

    text: str
    x: int
    y: int
    size: int = 40


@dataclass(frozen=True)
class Card:
    """A rounded card from ``top``, ``height`` tall, holding its lines."""

    top: int
    lines: tuple[Line, ...]
    height: int = 300


@dataclass
class DrawnCapture:
    """The capture (elements at the drawn boxes), its PNG, and each text's box."""

    capture: Capture
    png: bytes
    boxes: dict[str, Bounds] = field(default_factory=dict)  # text -> box


def draw_capture(capture_id: str, package: str, cards: Sequence[Card], *, height: int = 4000,
                 run_id: str = "run-test", title: str = "") -> DrawnCapture:
    """Render ``cards`` on a WIDTH x ``height`` page; elements carry the drawn text boxes."""
    image = Image.new("RGB", (WIDTH, height), "white")
    draw = ImageDraw.Draw(image)
    elements: list[UIElement] = []
    boxes: dict[str, Bounds] = {}
    for index, card in enumerate(cards):
        card_box = Bounds(left=24, top=card.top, right=WIDTH - 24, bottom=card.top + card.height)
        draw.rounded_rectangle((card_box.left, card_box.top, card_box.right, card_box.bottom),
                               radius=16, outline=(220, 220, 220), width=3)
        elements.append(UIElement(id=f"{capture_id}-card{index}", class_name="android.widget.LinearLayout",
                                  bounds=card_box, clickable=True))
        for number, line in enumerate(card.lines):
            font = ImageFont.truetype(FONT_PATH, line.size)
            left, top, right, bottom = draw.textbbox((line.x, line.y), line.text, font=font)
            draw.text((line.x, line.y), line.text, font=font, fill="black")
            box = Bounds(left=left, top=top, right=right, bottom=bottom)
            boxes[line.text] = box
            elements.append(UIElement(id=f"{capture_id}-c{index}-t{number}",
                                      class_name="android.widget.TextView",
                                      text=line.text, bounds=box, parent_id=f"{capture_id}-card{index}"))
    out = io.BytesIO()
    image.save(out, format="PNG")
    capture = Capture(id=capture_id, run_id=run_id, subtask_id=f"{package}-1", package=package,
                      image_key=f"runs/{run_id}/captures/{capture_id}.png", width=WIDTH,
                      height=height, elements=tuple(elements), title=title)
    return DrawnCapture(capture=capture, png=out.getvalue(), boxes=boxes)


def menu_card(top: int, name: str, *details: str) -> Card:
    """A menu item's card: its name in large type, then one line per detail."""
    lines = [Line(name, 60, top + 30, 48)]
    lines += [Line(text, 60, top + 110 + 70 * i) for i, text in enumerate(details)]
    return Card(top=top, lines=tuple(lines), height=110 + 70 * len(details) + 30)
